"""
Terraform/HCL: declared resources, data sources, modules, variables, outputs, locals and
providers, and the references between them; and a committed state file's resource
addresses (never its attribute values).

The HCL grammar (tree-sitter-hcl) is loaded the first time a ``.tf`` file is met, so a
repository without Terraform never pays for it. References are read from every expression,
including string and heredoc interpolations (``"${var.prefix}-logs"``).
"""

from __future__ import annotations

import json
from typing import Any

from eshu_mcp.query.local.index.parse.collectors import Collector, Fact

_PARSER: Any = None

# The first segment of a traversal that names something declared in configuration.
_SKIPPED_ROOTS = frozenset({"self", "count", "each", "path", "terraform", "local_file"})


def _parser() -> Any:
    """The HCL parser, created on first use (the grammar is imported only then)."""
    global _PARSER
    if _PARSER is None:
        import tree_sitter
        import tree_sitter_hcl

        _PARSER = tree_sitter.Parser(tree_sitter.Language(tree_sitter_hcl.language()))
    return _PARSER


def _text(node: Any) -> str:
    return node.text.decode("utf-8", "replace")


def _label(node: Any) -> str:
    """A block label: a quoted string's literal text, or a bare identifier."""
    if node.type == "identifier":
        return _text(node)
    return "".join(_text(part) for part in node.children if part.type == "template_literal")


def _block_parts(block: Any) -> tuple[str, list[str], Any]:
    """(block type, labels, body node) of a ``block``."""
    kind, labels, body = "", [], None
    for child in block.children:
        if child.type == "identifier" and not kind:
            kind = _text(child)
        elif child.type in ("string_lit", "identifier"):
            labels.append(_label(child))
        elif child.type == "body":
            body = child
    return kind, labels, body


def _attributes(body: Any) -> dict[str, Any]:
    """The attribute nodes directly in a body, by name (their expression node)."""
    found: dict[str, Any] = {}
    if body is None:
        return found
    for child in body.children:
        if child.type == "attribute":
            name = next((c for c in child.children if c.type == "identifier"), None)
            value = next((c for c in child.children if c.type == "expression"), None)
            if name is not None and value is not None:
                found[_text(name)] = value
    return found


def _literal(expression: Any) -> str | None:
    """A plain string or number literal's value; None for anything computed."""
    node = expression
    while node is not None and node.type in ("expression", "literal_value", "template_expr"):
        node = node.children[0] if node.children else None
    if node is None:
        return None
    if node.type in ("string_lit", "quoted_template"):
        if any(child.type == "template_interpolation" for child in node.children):
            return None
        return "".join(_text(c) for c in node.children if c.type == "template_literal")
    if node.type in ("numeric_lit", "bool_lit"):
        return _text(node)
    return None


def _traversals(node: Any):
    """Every ``root.attr.attr`` traversal under ``node``: (segments, line)."""
    stack = [node]
    while stack:
        current = stack.pop()
        if current.type == "variable_expr":
            segments = [_text(current)]
            sibling = current.next_sibling
            while sibling is not None and sibling.type == "get_attr":
                ident = next((c for c in sibling.children if c.type == "identifier"), None)
                if ident is None:
                    break
                segments.append(_text(ident))
                sibling = sibling.next_sibling
            yield segments, current.start_point[0] + 1
            continue
        stack.extend(reversed(current.children))


def reference_target(segments: list[str]) -> str | None:
    """The declared address a traversal points at (``var.x``, ``module.m``, ``a_b.c``...)."""
    root = segments[0]
    if root in _SKIPPED_ROOTS:
        return None
    if root in ("var", "local") and len(segments) >= 2:
        return f"{root}.{segments[1]}"
    if root == "module" and len(segments) >= 2:
        return f"module.{segments[1]}"
    if root == "data" and len(segments) >= 3:
        return f"data.{segments[1]}.{segments[2]}"
    if "_" in root and len(segments) >= 2:  # resource types are provider_kind
        return f"{root}.{segments[1]}"
    return None


def provider_of(resource_type: str) -> str:
    """The provider a resource type belongs to by Terraform's naming rule."""
    return resource_type.split("_", 1)[0]


def collect_terraform(relative_path: str, text: str) -> list[Fact]:
    """Facts of one ``.tf`` file."""
    tree = _parser().parse(text.encode("utf-8"))
    directory = relative_path.rsplit("/", 1)[0] if "/" in relative_path else ""
    facts: list[Fact] = []
    if tree.root_node.has_error:
        facts.append(Fact("tf_parse_error", relative_path, 0, {"partial": True}))
    body = next((c for c in tree.root_node.children if c.type == "body"), None)
    for block in body.children if body is not None else ():
        if block.type != "block":
            continue
        kind, labels, block_body = _block_parts(block)
        line = block.start_point[0] + 1
        attrs = _attributes(block_body)
        common = {"module_dir": directory}
        address = _declare(facts, kind, labels, attrs, line, common)
        if kind == "locals":
            for name, value in attrs.items():
                facts.append(Fact("tf_local", f"local.{name}", value.start_point[0] + 1, common))
                _references(facts, value, f"local.{name}", directory)
            continue
        if address and block_body is not None:
            _references(facts, block_body, address, directory)
    return facts


def _declare(facts, kind, labels, attrs, line, common) -> str | None:
    """Add the fact a top-level block declares; its address (None when it declares none)."""

    def value(name: str) -> str:
        return _literal(attrs[name]) or "" if name in attrs else ""

    counted = "count" in attrs or "for_each" in attrs
    if kind == "resource" and len(labels) >= 2:
        address = f"{labels[0]}.{labels[1]}"
        payload = {**common, "type": labels[0], "resource_name": labels[1]}
        payload.update(provider=value("provider") or provider_of(labels[0]), repeated=counted)
        facts.append(Fact("tf_resource", address, line, payload))
        return address
    if kind == "data" and len(labels) >= 2:
        address = f"data.{labels[0]}.{labels[1]}"
        payload = {**common, "type": labels[0], "resource_name": labels[1]}
        payload.update(provider=provider_of(labels[0]), repeated=counted)
        facts.append(Fact("tf_data", address, line, payload))
        return address
    if kind == "module" and labels:
        address = f"module.{labels[0]}"
        payload = {**common, "module_name": labels[0], "source": value("source")}
        payload.update(version=value("version"), repeated=counted)
        facts.append(Fact("tf_module", address, line, payload))
        return address
    if kind == "variable" and labels:
        payload = {**common, "has_default": "default" in attrs, "sensitive": "sensitive" in attrs}
        facts.append(Fact("tf_variable", f"var.{labels[0]}", line, payload))
        return f"var.{labels[0]}"
    if kind == "output" and labels:
        facts.append(Fact("tf_output", f"output.{labels[0]}", line, dict(common)))
        return f"output.{labels[0]}"
    if kind == "provider" and labels:
        payload = {**common, "alias": value("alias"), "region": value("region")}
        facts.append(Fact("tf_provider", labels[0], line, payload))
        return f"provider.{labels[0]}"
    if kind == "terraform":
        facts.append(Fact("tf_settings", "terraform", line, dict(common)))
        return "terraform"
    return None


def _references(facts: list[Fact], node: Any, source: str, directory: str) -> None:
    """One ``tf_reference`` fact per distinct target a block's expressions name."""
    seen: set[tuple[str, str]] = set()
    for segments, line in _traversals(node):
        target = reference_target(segments)
        if target is None or target == source:
            continue
        attribute = segments[2] if target.startswith("module.") and len(segments) > 2 else ""
        if (target, attribute) in seen:
            continue
        seen.add((target, attribute))
        payload = {"from": source, "module_dir": directory, "expression": ".".join(segments)}
        if attribute:
            payload["output"] = attribute
        facts.append(Fact("tf_reference", target, line, payload))


def collect_state(relative_path: str, text: str) -> list[Fact]:
    """
    A Terraform state file's resource addresses and types: what is under management.

    Attribute values (which hold secrets, passwords and keys) are never read into facts.
    """
    state = json.loads(text)
    facts: list[Fact] = []
    if not isinstance(state, dict):
        raise ValueError("a Terraform state file is a JSON object")
    header = {
        "version": state.get("version"),
        "terraform_version": str(state.get("terraform_version") or ""),
        "serial": state.get("serial"),
    }
    facts.append(Fact("tfstate", relative_path, 0, header))
    for resource in state.get("resources") or ():
        if not isinstance(resource, dict):
            continue
        mode, kind, name = resource.get("mode"), resource.get("type"), resource.get("name")
        if not isinstance(kind, str) or not isinstance(name, str):
            continue
        module = resource.get("module") if isinstance(resource.get("module"), str) else ""
        local = f"data.{kind}.{name}" if mode == "data" else f"{kind}.{name}"
        address = f"{module}.{local}" if module else local
        instances = resource.get("instances")
        payload = {
            "type": kind,
            "resource_name": name,
            "mode": "data" if mode == "data" else "managed",
            "module": module,
            "provider": _state_provider(resource.get("provider"), kind),
            "instance_count": len(instances) if isinstance(instances, list) else 0,
        }
        facts.append(Fact("tfstate_resource", address, 0, payload))
    return facts


def _state_provider(raw: object, resource_type: str) -> str:
    """``provider["registry.terraform.io/hashicorp/aws"]`` -> ``aws``."""
    if isinstance(raw, str) and '"' in raw:
        return raw.split('"')[1].rsplit("/", 1)[-1]
    return provider_of(resource_type)


TERRAFORM = Collector("terraform", collect_terraform, suffixes=(".tf",))
TERRAFORM_STATE = Collector(
    "terraform_state",
    collect_state,
    basenames=frozenset({"terraform.tfstate", "terraform.tfstate.backup"}),
    suffixes=(".tfstate",),
    withhold_content=True,  # state holds attribute values, secrets among them, in clear
)
