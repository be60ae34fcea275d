"""List the functions of Python files (embedded in dialogfarm).

stdin: {"files": {path: source}}. stdout: {"defs": {path: [def]},
"errors": {path: message}} where each def (functions and methods, nested in
classes, not in other functions) is

  name      qualified name (Class.method)
  line      first line (the first decorator's)
  end_line  last line
  decl      decorators and signature up to the header's colon, then the
            docstring when there is one: what a reader of the task sees
  body      the body after the docstring (no body: "")
  source    the whole definition with its decorators, dedented
  code      source without the docstring (when the docstring has lines
            of its own): what an answer that implements it shows

A file that does not parse is listed under errors and has no defs.
"""
import ast
import io
import json
import sys
import textwrap
import tokenize


def header_colon(seg):
    """Offset (in characters of seg) just after the colon that ends a def
    header: the last ':' operator before the body."""
    end = None
    lines = seg.splitlines(keepends=True)
    starts = [0]
    for l in lines:
        starts.append(starts[-1] + len(l))
    try:
        for tok in tokenize.generate_tokens(io.StringIO(seg).readline):
            if tok.type == tokenize.OP and tok.string == ":":
                end = starts[tok.end[0] - 1] + tok.end[1]
    except (tokenize.TokenError, IndentationError, SyntaxError):
        pass
    return end


def defs_of(src):
    data = src.encode("utf-8")
    tree = ast.parse(data)
    starts = [0]
    for line in data.splitlines(keepends=True):
        starts.append(starts[-1] + len(line))

    def off(line, col):
        return starts[line - 1] + col

    def text(a, b):
        return data[a:b].decode("utf-8")

    out = []

    def visit(body, prefix):
        for n in body:
            if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)):
                out.append(one(n, prefix + n.name))
            elif isinstance(n, ast.ClassDef):
                visit(n.body, prefix + n.name + ".")

    def one(n, name):
        first = n.decorator_list[0].lineno if n.decorator_list else n.lineno
        b0 = n.body[0]
        head_from = off(n.lineno, n.col_offset)
        seg = text(head_from, off(b0.lineno, b0.col_offset))
        colon = header_colon(seg)
        header = seg[:colon] if colon is not None else seg.rstrip()
        deco = text(off(first, 0), head_from) if n.decorator_list else " " * n.col_offset
        decl = textwrap.dedent(deco + header)
        doc = (isinstance(b0, ast.Expr) and isinstance(b0.value, ast.Constant) and isinstance(b0.value.value, str))
        rest = n.body[1:] if doc else n.body
        if doc:
            indent = " " * (b0.col_offset - n.col_offset) if b0.lineno != n.lineno else "    "
            decl += "\n" + indent + text(off(b0.lineno, b0.col_offset), off(b0.end_lineno, b0.end_col_offset))
        body = ""
        if rest:
            body = text(off(rest[0].lineno, rest[0].col_offset), off(rest[-1].end_lineno, rest[-1].end_col_offset))
        source = textwrap.dedent(text(off(first, 0), off(n.end_lineno, n.end_col_offset)))
        code = source
        if doc and rest and b0.lineno > n.lineno and rest[0].lineno > b0.end_lineno:
            # the docstring's own lines out, everything else as it is
            code = textwrap.dedent(text(off(first, 0), off(b0.lineno, 0)) + text(off(rest[0].lineno, 0), off(n.end_lineno, n.end_col_offset)))
        return {"name": name, "line": first, "end_line": n.end_lineno, "decl": decl, "body": body, "source": source, "code": code}

    visit(tree.body, "")
    return out


def main():
    req = json.load(sys.stdin)
    res = {"defs": {}, "errors": {}}
    for path, src in req["files"].items():
        try:
            res["defs"][path] = defs_of(src)
        except (SyntaxError, ValueError) as e:
            res["errors"][path] = str(e)
    json.dump(res, sys.stdout)


if __name__ == "__main__":
    main()
