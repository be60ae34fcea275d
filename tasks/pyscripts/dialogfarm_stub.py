"""Stub Python functions by AST positions (embedded in dialogfarm).

stdin: {"source": str, "targets": [{"line": int, "name": str}]}, where line is
the first line of the definition (first decorator) and name its qualified
name. stdout: the source with each target's body replaced by
``raise NotImplementedError("TODO: implement <name>")``; signature,
decorators, docstring and everything outside the bodies are kept byte for
byte.
"""
import ast
import json
import sys


def main():
    req = json.load(sys.stdin)
    src = req["source"].encode("utf-8")
    targets = {(t["line"], t["name"]) for t in req["targets"]}
    tree = ast.parse(src)
    starts = [0]
    for line in src.splitlines(keepends=True):
        starts.append(starts[-1] + len(line))

    def off(line, col):
        return starts[line - 1] + col

    edits = []
    found = set()

    def visit(body, prefix):
        for n in body:
            if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)):
                first = n.decorator_list[0].lineno if n.decorator_list else n.lineno
                key = (first, prefix + n.name)
                if key in targets:
                    found.add(key)
                    edits.append(stub(n, prefix + n.name))
            elif isinstance(n, ast.ClassDef):
                visit(n.body, prefix + n.name + ".")

    def stub(fn, name):
        raise_ = 'raise NotImplementedError("TODO: implement %s")' % name
        body = fn.body
        doc = (isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant)
               and isinstance(body[0].value.value, str))
        rest = body[1:] if doc else body
        if rest:
            return (off(rest[0].lineno, rest[0].col_offset), off(rest[-1].end_lineno, rest[-1].end_col_offset), raise_)
        d = body[0]
        at = off(d.end_lineno, d.end_col_offset)
        return (at, at, "\n" + " " * d.col_offset + raise_)

    visit(tree.body, "")
    missing = targets - found
    if missing:
        sys.stderr.write("functions not found: %s\n" % sorted(missing))
        sys.exit(3)
    out = src
    for a, b, text in sorted(edits, reverse=True):
        out = out[:a] + text.encode("utf-8") + out[b:]
    sys.stdout.write(out.decode("utf-8"))


if __name__ == "__main__":
    main()
