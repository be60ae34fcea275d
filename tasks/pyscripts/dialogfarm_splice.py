"""Splice the functions of an answer into a Python file (embedded in dialogfarm).

stdin: {"source": str, "answer": str, "targets": [qualified names]}.
stdout: the new source. Exit 3 with a message when the answer does not
parse or defines none of the targets.

A top-level def in the answer replaces the target of the same name (a
function, or a method when the name is unique among the targets' methods);
a class in the answer replaces its methods in the source's class of the
same name. Other new top-level defs are appended (helpers); answer defs
that name existing non-target functions are ignored. The answer's imports
that the file lacks are added after the file's last top-level import.
"""
import ast
import json
import sys
import textwrap


def fail(msg):
    sys.stderr.write(msg + "\n")
    sys.exit(3)


def docstring(fn):
    b = fn.body[0]
    if isinstance(b, ast.Expr) and isinstance(b.value, ast.Constant) and isinstance(b.value.value, str):
        return b
    return None


def with_doc(text, src_lines, src_fn):
    """text (a dedented def without a docstring) with src_fn's docstring
    put before its first statement, when both sit on lines of their own."""
    doc = docstring(src_fn)
    try:
        fn = ast.parse(text).body[0]
    except SyntaxError:
        return text
    if doc is None or docstring(fn) is not None:
        return text
    lines = text.splitlines(keepends=True)
    b0 = fn.body[0]
    if b0.col_offset == 0 or lines[b0.lineno - 1][:b0.col_offset].strip() or src_lines[doc.lineno - 1][:doc.col_offset].strip():
        return text  # a one-line def, or a docstring after other code
    shift = b0.col_offset - doc.col_offset
    moved = []
    for l in src_lines[doc.lineno - 1:doc.end_lineno]:
        if shift >= 0:
            moved.append(" " * shift + l if l.strip() else l)
        else:
            cut = min(-shift, len(l) - len(l.lstrip(" ")))
            moved.append(l[cut:])
    if moved and not moved[-1].endswith("\n"):
        moved[-1] += "\n"
    lines[b0.lineno - 1:b0.lineno - 1] = moved
    return "".join(lines)


def main():
    req = json.load(sys.stdin)
    src, answer, targets = req["source"], req["answer"], set(req["targets"])
    try:
        atree = ast.parse(textwrap.dedent(answer))
    except SyntaxError as e:
        fail("the answer's code does not parse: %s" % e)
    answer = textwrap.dedent(answer)
    alines = answer.splitlines(keepends=True)
    stree = ast.parse(src)
    slines = src.splitlines(keepends=True)

    defs = {}  # qualname -> node in source (classes nest)

    def collect(body, prefix):
        for n in body:
            if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)):
                defs[prefix + n.name] = n
            elif isinstance(n, ast.ClassDef):
                collect(n.body, prefix + n.name + ".")

    collect(stree.body, "")

    def seg(node):
        first = node.decorator_list[0].lineno if node.decorator_list else node.lineno
        return (textwrap.dedent("".join(alines[first - 1:node.end_lineno])), bool(node.decorator_list))

    repl = {}  # source qualname -> new text (dedented)
    extra = []
    for n in atree.body:
        if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)):
            if n.name in targets:
                repl[n.name] = seg(n)
                continue
            meths = [t for t in targets if t.endswith("." + n.name)]
            if len(meths) == 1:
                repl[meths[0]] = seg(n)
            elif n.name not in defs:
                extra.append(seg(n)[0])
        elif isinstance(n, ast.ClassDef):
            def walk(body, prefix):
                for m in body:
                    q = prefix + getattr(m, "name", "")
                    if isinstance(m, (ast.FunctionDef, ast.AsyncFunctionDef)) and q in targets:
                        repl[q] = seg(m)
                    elif isinstance(m, ast.ClassDef):
                        walk(m.body, q + ".")

            walk(n.body, n.name + ".")
    if not repl:
        fail("the answer defines none of %s" % ", ".join(sorted(targets)))

    edits = []
    for q, (text, decorated) in repl.items():
        node = defs.get(q)
        if node is None:
            fail("%s is not in the file" % q)
        text = with_doc(text, slines, node)
        # an answer without decorators keeps the file's (a model often
        # leaves out @property or @functools.wraps(...) lines it was shown)
        first = node.decorator_list[0].lineno if node.decorator_list and decorated else node.lineno
        indent = " " * node.col_offset
        body = "".join(indent + l if l.strip() else l for l in text.splitlines(keepends=True))
        if not body.endswith("\n"):
            body += "\n"
        edits.append((first - 1, node.end_lineno, body))
    for a, b, text in sorted(edits, reverse=True):
        slines[a:b] = [text]
    out = "".join(slines)
    if extra:
        if not out.endswith("\n"):
            out += "\n"
        out += "\n\n" + "\n\n".join(e.rstrip("\n") + "\n" for e in extra)

    have = {ast.unparse(n) for n in stree.body if isinstance(n, (ast.Import, ast.ImportFrom))}
    add = [ast.unparse(n) for n in atree.body if isinstance(n, (ast.Import, ast.ImportFrom)) and ast.unparse(n) not in have]
    if add:
        lines = out.splitlines(keepends=True)
        at = 0
        for n in stree.body:
            if isinstance(n, (ast.Import, ast.ImportFrom)):
                at = n.end_lineno
            elif at == 0 and isinstance(n, ast.Expr) and isinstance(getattr(n, "value", None), ast.Constant):
                at = n.end_lineno
        lines[at:at] = [l + "\n" for l in add]
        out = "".join(lines)
    try:
        ast.parse(out)
    except SyntaxError as e:
        fail("the spliced file does not parse: %s" % e)
    sys.stdout.write(out)


if __name__ == "__main__":
    main()
