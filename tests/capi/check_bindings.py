#!/usr/bin/env python3
"""The Fortran module's bind(C) interfaces checked against the C header they mirror (issue 26, item 4).

    check_bindings.py HEADER MODULE

HEADER is capi/include/sluice/sluice.h(.in), MODULE capi/fortran/sluice.f90(.in). Every `sluice_*` prototype of the
header must have exactly one `bind(C, name="sluice_...")` interface in the module (except the C-only ones taking an
MPI_Comm, which Fortran reaches through the MPI_Fint flavour), and each interface must agree with its prototype in:
  - the function name (the bind name) and function vs subroutine (void);
  - the number and order of arguments;
  - each argument's type and kind (int/enum/MPI_Fint <-> integer(c_int), int64_t <-> integer(c_int64_t),
    double <-> real(c_double), pointers and handles <-> type(c_ptr), value, const char* <-> character(kind=c_char)
    dimension(*), T** <-> type(c_ptr) by reference, struct X* <-> type(X) by reference, sluice_log_fn <-> c_funptr);
  - passing (value vs reference) and intent: a by-value C argument is `value`; a const pointer read by reference is
    intent(in); a non-const one intent(out) or intent(inout);
  - the result kind.
Also every bind(C) derived type named like a header struct must have the struct's fields in order, with the same
kinds (size_t <-> c_size_t, int32_t <-> c_int32_t, pointers <-> c_ptr, function pointers <-> c_funptr), and every
callback a struct holds (sluice_layer_ops' forward ..., sluice_loss_ops' loss) must have its abstract interface in the
module (CALLBACKS), agreeing with the function pointer's signature by the same rules.
Prints one line per drift and exits 1 on any; prints a summary and exits 0 otherwise.
"""
import re
import sys

ENUMS = {"sluice_status", "sluice_dtype", "sluice_state_scope", "sluice_log_level"}
# Value types: C type -> (Fortran type, kind).
SCALARS = {
    "int": ("integer", "c_int"),
    "MPI_Fint": ("integer", "c_int"),
    "int32_t": ("integer", "c_int32_t"),
    "int64_t": ("integer", "c_int64_t"),
    "size_t": ("integer", "c_size_t"),
    "double": ("real", "c_double"),
    "float": ("real", "c_float"),
    "sluice_log_fn": ("type", "c_funptr"),
}
for _e in ENUMS:
    SCALARS[_e] = ("integer", "c_int")
OPAQUE = {"sluice_trainer", "sluice_model", "void"}
STRUCTS = {"sluice_stats", "sluice_layer_ops", "sluice_layer_call", "sluice_loss_ops", "sluice_layout"}
# Function-pointer fields of the header's structs -> the module's abstract interface a Fortran callback follows.
CALLBACKS = {("sluice_layer_ops", "forward"): "sluice_forward_callback",
             ("sluice_layer_ops", "backward_input"): "sluice_backward_input_callback",
             ("sluice_layer_ops", "backward_weight"): "sluice_backward_weight_callback",
             ("sluice_layer_ops", "backward"): "sluice_backward_callback",
             ("sluice_loss_ops", "loss"): "sluice_loss_callback"}
# C functions Fortran cannot call as declared: a C MPI_Comm is not a Fortran type (sluice_trainer_create_f is).
C_ONLY_TYPES = {"MPI_Comm"}


# --- the header -----------------------------------------------------------------------------------------------

def strip_c(text):
    text = re.sub(r"/\*.*?\*/", " ", text, flags=re.S)
    text = re.sub(r"//[^\n]*", " ", text)
    return "\n".join(line for line in text.split("\n") if not line.lstrip().startswith("#"))


def c_param(text):
    """'const float* inputs' -> dict(type='float', const=True, stars=1, name='inputs')."""
    text = " ".join(text.replace("*", " * ").split())
    if text == "void":
        return None
    words = text.split()
    const = "const" in words[:-1]
    words = [w for w in words if w != "const"]
    stars = words.count("*")
    words = [w for w in words if w != "*"]
    if len(words) != 2:
        raise ValueError("cannot read C parameter %r" % text)
    return {"type": words[0], "const": const, "stars": stars, "name": words[1]}


def header_functions(text):
    functions = {}
    body = strip_c(text)
    for statement in body.split(";"):
        s = " ".join(statement.split())
        m = re.match(r"^(?:extern \"C\" \{ )?(const )?([A-Za-z_]\w*)\s*(\*?)\s*(sluice_\w+)\s*\((.*)\)$", s)
        if not m or s.startswith("typedef"):
            continue
        ret = {"type": m.group(2), "const": bool(m.group(1)), "stars": 1 if m.group(3) else 0}
        params = [p for p in (c_param(x) for x in m.group(5).split(",")) if p is not None]
        functions[m.group(4)] = {"ret": ret, "params": params}
    return functions


def header_structs(text):
    structs = {}
    body = strip_c(text)
    for m in re.finditer(r"typedef struct (\w+) \{(.*?)\}\s*\w+\s*;", body, flags=re.S):
        fields = []
        for decl in m.group(2).split(";"):
            d = " ".join(decl.split())
            if not d:
                continue
            fp = re.match(r"^.*\(\s*\*\s*(\w+)\s*\)\s*\(.*\)$", d)
            if fp:
                fields.append((fp.group(1), "c_funptr"))
                continue
            p = c_param(d)
            kind = "c_ptr" if p["stars"] else SCALARS.get(p["type"], (None, "?" + p["type"]))[1]
            fields.append((p["name"], kind))
        structs[m.group(1)] = fields
    return structs


def header_callbacks(text):
    """(struct, field) -> {ret, params} for every function-pointer field of a typedef'd struct."""
    callbacks = {}
    body = strip_c(text)
    for m in re.finditer(r"typedef struct (\w+) \{(.*?)\}\s*\w+\s*;", body, flags=re.S):
        for decl in m.group(2).split(";"):
            d = " ".join(decl.split())
            fp = re.match(r"^(\w+)\s*\(\s*\*\s*(\w+)\s*\)\s*\((.*)\)$", d)
            if fp:
                params = [p for p in (c_param(x) for x in fp.group(3).split(",")) if p is not None]
                callbacks[(m.group(1), fp.group(2))] = {"ret": {"type": fp.group(1), "const": False, "stars": 0},
                                                        "params": params}
    return callbacks


# --- the module -----------------------------------------------------------------------------------------------

def fortran_lines(text):
    """Statements with comments removed and & continuations joined, lower-cased outside strings."""
    out, pending = [], ""
    for raw in text.split("\n"):
        line, quote = "", None
        for ch in raw:
            if quote:
                line += ch
                if ch == quote:
                    quote = None
            elif ch in "'\"":
                quote = ch
                line += ch
            elif ch == "!":
                break
            else:
                line += ch.lower()
        line = line.strip()
        if pending and line.startswith("&"):
            line = line[1:].strip()
        if line.endswith("&"):
            pending += line[:-1] + " "
            continue
        out.append((pending + line).strip())
        pending = ""
    return [l for l in out if l]


DECL = re.compile(r"^(integer|real|type|character)\s*\(([^)]*)\)\s*(,[^:]*)?::\s*(.*)$")


def split_names(names):
    depth, cur, out = 0, "", []
    for ch in names:
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
        if ch == "," and depth == 0:
            out.append(cur.strip())
            cur = ""
        else:
            cur += ch
    if cur.strip():
        out.append(cur.strip())
    return [re.sub(r"\s*=.*$", "", re.sub(r"\(.*\)$", "", n)).strip() for n in out]


def parse_decl(line):
    m = DECL.match(line)
    if not m:
        return None
    base, spec, attrs = m.group(1), m.group(2).replace(" ", ""), (m.group(3) or "")
    kind = spec.split("=")[-1]  # character(kind=c_char), integer(c_int), type(c_ptr), type(sluice_stats)
    attrs = attrs.replace(" ", "")
    intent = re.search(r"intent\((in|out|inout)\)", attrs)
    info = {"base": base, "kind": kind, "value": ",value" in attrs,
            "intent": intent.group(1) if intent else None,
            "assumed_size": "dimension(*)" in attrs}
    return [(name, dict(info)) for name in split_names(m.group(4))]


def module_interfaces(text, abstract=False):
    """bind(C, name="...") interfaces by C name; with `abstract`, the bind(C) interfaces without a name (the
    callbacks' abstract interfaces) by their Fortran name."""
    lines = fortran_lines(text)
    interfaces = {}
    named = r"\s*,\s*name\s*=\s*[\"'](\w+)[\"']" if not abstract else r"()"
    head = re.compile(r"^([\w()]+\s+)?(function|subroutine)\s+(\w+)\s*\(([^)]*)\)\s*bind\s*\(\s*c" + named +
                      r"\s*\)\s*(?:result\s*\(\s*(\w+)\s*\))?$")
    i = 0
    while i < len(lines):
        m = head.match(lines[i])
        if not m:
            i += 1
            continue
        prefix, kind, fname, args, cname, result = m.groups()
        cname = cname or fname
        args = [a.strip() for a in args.split(",") if a.strip()]
        decls = {}
        i += 1
        while i < len(lines) and not re.match(r"^end\s*(function|subroutine)\b", lines[i]):
            for name, info in parse_decl(lines[i]) or []:
                decls[name] = info
            i += 1
        typed = re.match(r"^(\w+)\((\w+)\)\s*$", prefix or "")  # `integer(c_int) function f(..)`
        if typed and kind == "function" and (result or fname) not in decls:
            decls[result or fname] = {"base": typed.group(1), "kind": typed.group(2), "value": False, "intent": None,
                                      "assumed_size": False}
        entry = {"fortran_name": fname, "kind": kind, "args": [(a, decls.get(a)) for a in args],
                 "result": decls.get(result or fname) if kind == "function" else None}
        interfaces.setdefault(cname, []).append(entry)
    return interfaces


def module_types(text):
    lines = fortran_lines(text)
    types, i = {}, 0
    while i < len(lines):
        m = re.match(r"^type\s*,\s*bind\s*\(\s*c\s*\)\s*(?:,\s*public\s*)?::\s*(\w+)$", lines[i])
        if not m:
            i += 1
            continue
        fields = []
        i += 1
        while i < len(lines) and not lines[i].startswith("end type"):
            for name, info in parse_decl(lines[i]) or []:
                fields.append((name, info["kind"]))
            i += 1
        types[m.group(1)] = fields
    return types


# --- the comparison ---------------------------------------------------------------------------------------------

def describe(f):
    if f is None:
        return "undeclared"
    text = "%s(%s)" % (f["base"], f["kind"])
    if f["assumed_size"]:
        text += ", dimension(*)"
    if f["value"]:
        text += ", value"
    if f["intent"]:
        text += ", intent(%s)" % f["intent"]
    return text


def check_param(p, f):
    """None when the Fortran dummy f matches the C parameter p, else what it should be."""
    t, stars, const = p["type"], p["stars"], p["const"]
    if f is None:
        return "a declaration"
    if stars == 0:
        want = SCALARS.get(t)
        if want is None:
            return "a known C type (%s has no Fortran counterpart in this checker)" % t
        if (f["base"], f["kind"]) != want or not f["value"] or f["intent"] not in (None, "in"):
            return "%s(%s), value" % want
        return None
    # Any pointer may be passed as a C address by value.
    if (f["base"], f["kind"]) == ("type", "c_ptr") and f["value"]:
        if stars == 1:
            return None
        return "type(c_ptr), intent(out) (a %s** is filled in)" % t
    if stars == 2:
        if (f["base"], f["kind"]) == ("type", "c_ptr") and not f["value"] and f["intent"] in ("out", "inout"):
            return None
        return "type(c_ptr), intent(out) (a %s** is filled in)" % t
    read_intents = ("in",) if const else ("out", "inout")
    intent_text = "intent(in)" if const else "intent(out) or intent(inout)"
    if t == "char":
        if const and (f["base"], f["kind"]) == ("character", "c_char") and f["assumed_size"] and \
                f["intent"] == "in" and not f["value"]:
            return None
        return "character(kind=c_char), dimension(*), intent(in) or type(c_ptr), value"
    if t in STRUCTS:
        if (f["base"], f["kind"]) == ("type", t) and not f["value"] and f["intent"] in read_intents:
            return None
        return "type(%s), %s" % (t, intent_text)
    if t in OPAQUE:
        return "type(c_ptr), value"
    want = SCALARS.get(t)
    if want and (f["base"], f["kind"]) == want and not f["value"] and f["intent"] in read_intents:
        return None
    if want:
        return "%s(%s), %s or type(c_ptr), value" % (want[0], want[1], intent_text)
    return "a known C type (%s* has no Fortran counterpart in this checker)" % t


def check_result(ret, entry):
    if ret["type"] == "void" and ret["stars"] == 0:
        return None if entry["kind"] == "subroutine" else "a subroutine (the C function returns void)"
    if entry["kind"] != "function":
        return "a function"
    r = entry["result"]
    if ret["stars"]:
        want = ("type", "c_ptr")
    else:
        want = SCALARS.get(ret["type"])
    if r is None or (r["base"], r["kind"]) != want:
        return "a %s(%s) result (got %s)" % (want[0], want[1], describe(r))
    return None


def compare(header_text, module_text):
    problems = []
    functions = header_functions(header_text)
    interfaces = module_interfaces(module_text)
    if not functions:
        problems.append("no sluice_* prototypes found in the header")
    checked = 0
    for name, proto in sorted(functions.items()):
        c_only = [p for p in proto["params"] if p["type"] in C_ONLY_TYPES]
        found = interfaces.get(name, [])
        if c_only:
            if found:
                problems.append("%s: takes a C %s, which Fortran cannot pass, yet the module binds it"
                                % (name, c_only[0]["type"]))
            continue
        if not found:
            problems.append("%s: declared in the header but no bind(C, name=\"%s\") interface in the module"
                            % (name, name))
            continue
        if len(found) > 1:
            problems.append("%s: bound %d times in the module" % (name, len(found)))
        for entry in found:
            checked += 1
            problems += signature_problems("%s (Fortran %s)" % (name, entry["fortran_name"]), proto, entry)
    for name in sorted(interfaces):
        if name.startswith("sluice_") and name not in functions:
            problems.append("%s: bound in the module but not declared in the header" % name)
    structs = header_structs(header_text)
    types = module_types(module_text)
    for name, fields in sorted(structs.items()):
        if name not in types:
            problems.append("struct %s: no bind(C) type %s in the module" % (name, name))
            continue
        got = types[name]
        if [k for _, k in got] != [k for _, k in fields] or [n for n, _ in got] != [n.lower() for n, _ in fields]:
            problems.append("struct %s: fields differ: header %s, module %s"
                            % (name, ", ".join("%s:%s" % f for f in fields), ", ".join("%s:%s" % f for f in got)))
    problems += callback_problems(header_text, module_text)
    return problems, checked, len(structs)


def signature_problems(where, proto, entry):
    """How the Fortran interface `entry` differs from the C signature `proto` (result, argument count, each argument)."""
    problems = []
    why = check_result(proto["ret"], entry)
    if why:
        problems.append("%s: should be %s" % (where, why))
    if len(entry["args"]) != len(proto["params"]):
        return problems + ["%s: %d arguments in the module, %d in the header (%s)"
                           % (where, len(entry["args"]), len(proto["params"]),
                              ", ".join(p["name"] for p in proto["params"]))]
    for position, (p, (fname, f)) in enumerate(zip(proto["params"], entry["args"]), 1):
        why = check_param(p, f)
        if why:
            problems.append("%s: argument %d (C %s%s %s%s, Fortran %s) is %s; should be %s"
                            % (where, position, "const " if p["const"] else "", p["type"], "*" * p["stars"],
                               p["name"], fname, describe(f), why))
    return problems


def callback_problems(header_text, module_text):
    """Every struct callback has its abstract interface (CALLBACKS), with the function pointer's signature."""
    problems = []
    callbacks = header_callbacks(header_text)
    abstract = module_interfaces(module_text, abstract=True)
    for (struct, field), proto in sorted(callbacks.items()):
        name = CALLBACKS.get((struct, field))
        if name is None:
            problems.append("%s.%s: a callback with no abstract interface named in check_bindings.py's CALLBACKS"
                            % (struct, field))
            continue
        found = abstract.get(name, [])
        if len(found) != 1:
            problems.append("%s.%s: %d abstract interfaces %s in the module (expected 1)"
                            % (struct, field, len(found), name))
            continue
        problems += signature_problems("%s.%s (Fortran %s)" % (struct, field, name), proto, found[0])
    return problems


def main(argv):
    if len(argv) != 3:
        print(__doc__)
        return 2
    with open(argv[1]) as f:
        header = f.read()
    with open(argv[2]) as f:
        module = f.read()
    problems, checked, structs = compare(header, module)
    for p in problems:
        print("DRIFT: " + p)
    if problems:
        return 1
    print("bindings agree: %d C functions, %d structs" % (checked, structs))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
