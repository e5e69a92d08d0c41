#!/usr/bin/env python3
"""Counts the public member functions of every class and struct in C++ headers, and refuses any over a limit.

docs/ARCHITECTURE.md: no class in core/runtime has more than 20 public methods (a class past that is a hub that
wants splitting along the flow, as the Trainer was). Constructors, destructors and deleted functions are not
counted; overloads are (each is one more way in). A struct without methods counts 0.

  public_methods.py check DIR [--limit N]   exit 1 naming each class over N (default 20) in DIR/**/*.h
  public_methods.py report DIR              every class with methods and its count
"""
import os
import re
import sys

ACCESS = re.compile(r"\b(public|private|protected)\s*:(?!:)")
HEAD = re.compile(r"\b(class|struct)\s+(\w+)\s*(?:final\s*)?(?::(?!:)[^{;()]*)?\{")
SKIP_STARTS = ("using ", "typedef ", "friend ", "static_assert", "enum ", "class ", "struct ", "union ")


def strip_source(text):
    """Comments, string and character literals and preprocessor lines removed (their braces would mislead)."""
    text = re.sub(r"//[^\n]*", "", text)
    text = re.sub(r"/\*.*?\*/", "", text, flags=re.S)
    text = re.sub(r'"(?:\\.|[^"\\\n])*"', '""', text)
    text = re.sub(r"'(?:\\.|[^'\\\n])*'", "''", text)
    return "\n".join(line for line in text.split("\n") if not line.lstrip().startswith("#"))


def body_end(text, open_brace):
    depth = 0
    for i in range(open_brace, len(text)):
        if text[i] == "{":
            depth += 1
        elif text[i] == "}":
            depth -= 1
            if depth == 0:
                return i
    return len(text) - 1


def flatten(body):
    """The body's top level: every nested {...} becomes '{};' so that each member ends at a ';'."""
    out, depth = [], 0
    for ch in body:
        if ch == "{":
            if depth == 0:
                out.append("{")
            depth += 1
        elif ch == "}":
            depth -= 1
            if depth == 0:
                out.append("};")
        elif depth == 0:
            out.append(ch)
    return "".join(out)


def method_name(statement):
    """The name of the function a member declaration declares, or None for a data member or a type."""
    if "operator" in re.findall(r"\b\w+\b", statement):
        return "operator"
    angle = 0
    for i, ch in enumerate(statement):
        if ch == "<":
            angle += 1
        elif ch == ">" and angle > 0:
            angle -= 1
        elif angle == 0 and ch in "={":
            return None
        elif angle == 0 and ch == "(":
            found = re.search(r"(~?\w+)\s*$", statement[:i])
            return found.group(1) if found else None
    return None


def public_methods(name, kind, body):
    """The public member functions of one class body."""
    flat = flatten(body)
    methods = []
    public = kind == "struct"
    pieces = ACCESS.split(flat)
    # split() alternates text and captured access words: text0, word1, text1, word2, text2, ...
    for index, piece in enumerate(pieces):
        if index % 2 == 1:
            public = piece == "public"
            continue
        if not public:
            continue
        for statement in piece.split(";"):
            statement = " ".join(statement.split())
            statement = re.sub(r"^\[\[\w+\]\]\s*", "", statement)
            if not statement or statement.startswith(SKIP_STARTS) or statement.startswith("{"):
                continue
            found = method_name(statement)
            if found is None or found.lstrip("~") == name or re.search(r"=\s*delete\b", statement):
                continue
            methods.append(found)
    return methods


def classes_in(path):
    """(class name, public method names) for every class and struct defined in one header, nested ones too."""
    with open(path, encoding="utf-8") as f:
        text = strip_source(f.read())
    found = []
    for head in HEAD.finditer(text):
        open_brace = head.end() - 1
        body = text[open_brace + 1:body_end(text, open_brace)]
        found.append((head.group(2), public_methods(head.group(2), head.group(1), body)))
    return found


def headers(root):
    for directory, _, files in os.walk(root):
        for file in sorted(files):
            if file.endswith(".h"):
                yield os.path.join(directory, file)


def main(argv):
    if len(argv) < 3 or argv[1] not in ("check", "report"):
        print(__doc__)
        return 2
    root = argv[2]
    limit = int(argv[argv.index("--limit") + 1]) if "--limit" in argv else 20
    over = []
    for path in sorted(headers(root)):
        for name, methods in classes_in(path):
            where = os.path.relpath(path, root)
            if argv[1] == "report" and methods:
                print(f"{where}: {name}: {len(methods)}")
            if len(methods) > limit:
                over.append(f"{where}: {name} has {len(methods)} public methods (limit {limit}): {', '.join(methods)}")
    for line in over:
        print(line)
    return 1 if over else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
