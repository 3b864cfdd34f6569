#!/usr/bin/env python3
"""Which folder of Sources/ArchiverCore/ uses which, from the compiler's own index; exit 1 on a cycle.

Reads the index store that `swift build` (debug) writes to .build/debug/index/store through the
toolchain's libIndexStore.so (ctypes, no packages). Every symbol occurrence there is resolved by
the compiler, so a name is counted only where it really means the declaration, never because a
member or a comment happens to spell the same word.

The rule: a file in folder A depends on folder B when it has an explicit (not compiler-implied)
reference to a declaration whose definition is in a file of B: a type, protocol, typealias,
global function or variable, or a member of any of them (a case, method, property, initializer).
A member belongs to the folder of the file that defines it, so a method that an extension in A
adds to a type of B is A's. Local symbols and generic parameters are skipped (they never leave
their file). `--types-only` counts references to top-level declarations alone, as a weaker check.
Only ArchiverCore has folders: the other targets are flat, and SwiftPM refuses a cycle between
targets.

Usage: scripts/folder-deps.py [--root DIR] [--types-only] [--edges] [--quiet]
  prints each folder's dependencies (with --edges, every edge with the files and names that make
  it) and every cycle with the files and names behind each of its edges. Exits 0 without a
  cycle, 1 with one, 2 when it cannot tell (no index, or one older than a source file).
"""

import argparse
import ctypes
import glob
import os
import shutil
import sys
from collections import defaultdict

ROLE_DECLARATION = 1 << 0
ROLE_DEFINITION = 1 << 1
ROLE_REFERENCE = 1 << 2
ROLE_IMPLICIT = 1 << 8
ROLE_REL_CHILDOF = 1 << 9
PROPERTY_LOCAL = 1 << 7
DEPENDENCY_RECORD = 2

KIND = {0: "unknown", 5: "enum", 6: "struct", 7: "class", 8: "protocol", 9: "extension",
        11: "typealias", 12: "function", 13: "variable", 14: "field", 15: "case",
        16: "method", 17: "class method", 18: "static method", 19: "property",
        20: "class property", 21: "static property", 22: "initializer", 23: "deinit",
        25: "parameter"}
SUBKIND_GENERIC_PARAM = 1013
SUBKIND_ASSOCIATED_TYPE = 1012


class StringRef(ctypes.Structure):
    _fields_ = [("data", ctypes.c_char_p), ("length", ctypes.c_size_t)]

    def text(self):
        return ctypes.string_at(self.data, self.length).decode() if self.length else ""


def fail(message):
    """Exit 2: the check could not be made (exit 1 is kept for a cycle)."""
    print("folder-deps: " + message, file=sys.stderr)
    sys.exit(2)


def load_library():
    swift = shutil.which("swift")
    if swift is None:
        fail("no swift on PATH (libIndexStore.so comes with the toolchain)")
    lib_dir = os.path.join(os.path.dirname(os.path.dirname(os.path.realpath(swift))), "lib")
    lib = ctypes.CDLL(os.path.join(lib_dir, "libIndexStore.so"))
    ptr, sref = ctypes.c_void_p, StringRef
    signatures = {
        "indexstore_store_create": (ptr, [ctypes.c_char_p, ctypes.POINTER(ptr)]),
        "indexstore_store_units_apply_f": (ctypes.c_bool, [ptr, ctypes.c_uint, ptr, ptr]),
        "indexstore_unit_reader_create": (ptr, [ptr, ctypes.c_char_p, ctypes.POINTER(ptr)]),
        "indexstore_unit_reader_dispose": (None, [ptr]),
        "indexstore_unit_reader_get_main_file": (sref, [ptr]),
        "indexstore_unit_reader_get_module_name": (sref, [ptr]),
        "indexstore_unit_reader_get_modification_time":
            (None, [ptr, ctypes.POINTER(ctypes.c_int64), ctypes.POINTER(ctypes.c_int64)]),
        "indexstore_unit_reader_dependencies_apply_f": (ctypes.c_bool, [ptr, ptr, ptr]),
        "indexstore_unit_dependency_get_kind": (ctypes.c_int, [ptr]),
        "indexstore_unit_dependency_get_name": (sref, [ptr]),
        "indexstore_unit_dependency_get_filepath": (sref, [ptr]),
        "indexstore_record_reader_create": (ptr, [ptr, ctypes.c_char_p, ctypes.POINTER(ptr)]),
        "indexstore_record_reader_dispose": (None, [ptr]),
        "indexstore_record_reader_occurrences_apply_f": (ctypes.c_bool, [ptr, ptr, ptr]),
        "indexstore_occurrence_get_symbol": (ptr, [ptr]),
        "indexstore_occurrence_get_roles": (ctypes.c_uint64, [ptr]),
        "indexstore_occurrence_get_line_col":
            (None, [ptr, ctypes.POINTER(ctypes.c_uint), ctypes.POINTER(ctypes.c_uint)]),
        "indexstore_occurrence_relations_apply_f": (ctypes.c_bool, [ptr, ptr, ptr]),
        "indexstore_symbol_relation_get_roles": (ctypes.c_uint64, [ptr]),
        "indexstore_symbol_get_kind": (ctypes.c_int, [ptr]),
        "indexstore_symbol_get_subkind": (ctypes.c_int, [ptr]),
        "indexstore_symbol_get_properties": (ctypes.c_uint64, [ptr]),
        "indexstore_symbol_get_name": (sref, [ptr]),
        "indexstore_symbol_get_usr": (sref, [ptr]),
        "indexstore_error_get_description": (ctypes.c_char_p, [ptr]),
    }
    for name, (restype, argtypes) in signatures.items():
        function = getattr(lib, name)
        function.restype, function.argtypes = restype, argtypes
    return lib


UNIT_APPLIER = ctypes.CFUNCTYPE(ctypes.c_bool, ctypes.c_void_p, StringRef)
POINTER_APPLIER = ctypes.CFUNCTYPE(ctypes.c_bool, ctypes.c_void_p, ctypes.c_void_p)


class Occurrence:
    __slots__ = ("usr", "name", "kind", "roles", "line", "top_level")

    def __init__(self, usr, name, kind, roles, line, top_level):
        self.usr, self.name, self.kind, self.roles, self.line = usr, name, kind, roles, line
        self.top_level = top_level


def read_store(lib, store_path, sources_root):
    """Returns {source file: [Occurrence]} for the newest unit of every existing file under sources_root."""
    if not os.path.isdir(store_path):
        fail("no index at %s; run `swift build` (debug) first" % store_path)
    error = ctypes.c_void_p()
    store = lib.indexstore_store_create(store_path.encode(), ctypes.byref(error))
    if not store:
        fail("cannot open %s: %s" % (
            store_path, lib.indexstore_error_get_description(error).decode()))

    unit_names = []
    keep_unit = UNIT_APPLIER(lambda _, name: unit_names.append(name.text()) or True)
    lib.indexstore_store_units_apply_f(store, 0, None, keep_unit)

    newest = {}  # source file -> (mtime, [record names])
    for unit_name in unit_names:
        unit = lib.indexstore_unit_reader_create(store, unit_name.encode(), ctypes.byref(error))
        if not unit:
            continue
        main_file = os.path.realpath(lib.indexstore_unit_reader_get_main_file(unit).text())
        if main_file.startswith(sources_root + os.sep) and os.path.exists(main_file):
            seconds, nanoseconds = ctypes.c_int64(), ctypes.c_int64()
            lib.indexstore_unit_reader_get_modification_time(
                unit, ctypes.byref(seconds), ctypes.byref(nanoseconds))
            mtime = seconds.value + nanoseconds.value / 1e9
            records = []

            def keep_record(_, dependency):
                if lib.indexstore_unit_dependency_get_kind(dependency) == DEPENDENCY_RECORD:
                    path = lib.indexstore_unit_dependency_get_filepath(dependency).text()
                    if os.path.realpath(path) == main_file:
                        records.append(lib.indexstore_unit_dependency_get_name(dependency).text())
                return True

            applier = POINTER_APPLIER(keep_record)
            lib.indexstore_unit_reader_dependencies_apply_f(unit, None, applier)
            if main_file not in newest or newest[main_file][0] < mtime:
                newest[main_file] = (mtime, records)
        lib.indexstore_unit_reader_dispose(unit)

    stale = [path for path, (mtime, _) in newest.items() if os.path.getmtime(path) > mtime + 1]
    missing = [path for path in glob.glob(os.path.join(sources_root, "**", "*.swift"), recursive=True)
               if os.path.realpath(path) not in newest]
    if stale or missing:
        names = sorted(os.path.relpath(p, sources_root) for p in stale + missing)
        fail("the index is older than %s; run `swift build` first" % ", ".join(names[:5]))

    occurrences = {}
    for path, (_, record_names) in newest.items():
        found = []

        def keep_occurrence(_, occurrence):
            symbol = lib.indexstore_occurrence_get_symbol(occurrence)
            if lib.indexstore_symbol_get_properties(symbol) & PROPERTY_LOCAL:
                return True
            if lib.indexstore_symbol_get_subkind(symbol) in (SUBKIND_GENERIC_PARAM, SUBKIND_ASSOCIATED_TYPE):
                return True
            kind = lib.indexstore_symbol_get_kind(symbol)
            if kind in (0, 9, 25):  # unknown, the extension itself, parameters
                return True
            roles = lib.indexstore_occurrence_get_roles(occurrence)
            # A definition without a parent (no child-of relation to a type or an extension)
            # is a top-level declaration of its file.
            parents[0] = 0
            if roles & ROLE_DEFINITION:
                lib.indexstore_occurrence_relations_apply_f(occurrence, None, count_parent)
            line, column = ctypes.c_uint(), ctypes.c_uint()
            lib.indexstore_occurrence_get_line_col(occurrence, ctypes.byref(line), ctypes.byref(column))
            found.append(Occurrence(
                lib.indexstore_symbol_get_usr(symbol).text(),
                lib.indexstore_symbol_get_name(symbol).text(),
                kind, roles, line.value, parents[0] == 0))
            return True

        def note_parent(_, relation):
            if lib.indexstore_symbol_relation_get_roles(relation) & ROLE_REL_CHILDOF:
                parents[0] += 1
            return True

        parents = [0]
        count_parent = POINTER_APPLIER(note_parent)
        applier = POINTER_APPLIER(keep_occurrence)
        for record_name in record_names:
            record = lib.indexstore_record_reader_create(store, record_name.encode(), ctypes.byref(error))
            if record:
                lib.indexstore_record_reader_occurrences_apply_f(record, None, applier)
                lib.indexstore_record_reader_dispose(record)
        occurrences[path] = found
    return occurrences


def folder_of(path, core_root):
    """The folder a file belongs to: ArchiverCore's own folder, or the target for the other targets."""
    relative = os.path.relpath(path, core_root)
    if not relative.startswith(".."):
        parts = relative.split(os.sep)
        return parts[0] if len(parts) > 1 else "(ArchiverCore)"
    return None


def build_edges(occurrences, core_root, types_only):
    """Returns {(A, B): {(file, name): [lines]}} for A != B, both folders of ArchiverCore."""
    defined_in = {}
    top_level_usrs = set()
    for path, found in occurrences.items():
        for occurrence in found:
            if occurrence.roles & ROLE_DEFINITION:
                defined_in.setdefault(occurrence.usr, path)
                if occurrence.top_level:
                    top_level_usrs.add(occurrence.usr)

    edges = defaultdict(lambda: defaultdict(list))
    for path, found in occurrences.items():
        source = folder_of(path, core_root)
        if source is None:
            continue
        for occurrence in found:
            if not occurrence.roles & ROLE_REFERENCE or occurrence.roles & ROLE_IMPLICIT:
                continue
            if types_only and occurrence.usr not in top_level_usrs:
                continue
            definition = defined_in.get(occurrence.usr)
            if definition is None:
                continue  # the standard library, Foundation, a C module
            target = folder_of(definition, core_root)
            if target is None or target == source:
                continue
            label = occurrence.name
            if occurrence.usr not in top_level_usrs:
                label = "%s (%s in %s)" % (occurrence.name, KIND.get(occurrence.kind, "member"),
                                           os.path.basename(definition))
            edges[(source, target)][(os.path.basename(path), label)].append(occurrence.line)
    return edges


def cycles(graph):
    """Strongly connected components of more than one folder (Tarjan), each sorted."""
    index, low, on_stack, stack, result = {}, {}, set(), [], []
    counter = [0]

    def visit(node):
        index[node] = low[node] = counter[0]
        counter[0] += 1
        stack.append(node)
        on_stack.add(node)
        for successor in sorted(graph.get(node, ())):
            if successor not in index:
                visit(successor)
                low[node] = min(low[node], low[successor])
            elif successor in on_stack:
                low[node] = min(low[node], index[successor])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                result.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return result


def layers(graph, folders):
    """Folders by height in an acyclic graph: 0 uses no other folder, n uses some folder of n - 1."""
    height = {}

    def measure(node):
        if node not in height:
            height[node] = 1 + max((measure(s) for s in graph.get(node, ())), default=-1)
        return height[node]

    result = defaultdict(list)
    for folder in folders:
        result[measure(folder)].append(folder)
    return [sorted(result[n]) for n in sorted(result)]


def describe(edge, uses, limit=None):
    lines = ["  %s -> %s" % edge]
    items = sorted(uses.items())
    for (file, name), at in items[:limit]:
        lines.append("      %s: %s (line %s)" % (file, name, ", ".join(str(n) for n in sorted(set(at)))))
    if limit is not None and len(items) > limit:
        lines.append("      ... and %d more" % (len(items) - limit))
    return lines


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--root", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
    parser.add_argument("--types-only", action="store_true",
                        help="count references to top-level declarations only, not to members")
    parser.add_argument("--edges", action="store_true", help="list the files and names behind every edge")
    parser.add_argument("--quiet", action="store_true", help="print only cycles")
    arguments = parser.parse_args()

    root = os.path.realpath(arguments.root)
    core_root = os.path.join(root, "Sources", "ArchiverCore")
    lib = load_library()
    occurrences = read_store(lib, os.path.join(root, ".build", "debug", "index", "store"),
                             os.path.join(root, "Sources"))
    edges = build_edges(occurrences, core_root, arguments.types_only)

    graph = defaultdict(set)
    for source, target in edges:
        graph[source].add(target)
    if not arguments.quiet:
        folders = sorted({folder_of(p, core_root) for p in occurrences} - {None})
        print("folder dependencies in Sources/ArchiverCore (%s):" % (
            "references to top-level declarations" if arguments.types_only
            else "references to any declaration, members included"))
        for folder in folders:
            print("  %-14s -> %s" % (folder, ", ".join(sorted(graph.get(folder, ()))) or "(nothing)"))
        if arguments.edges:
            for edge in sorted(edges):
                print("\n".join(describe(edge, edges[edge])))

    found = cycles(graph)
    if not found:
        print("no folder cycle; layers, each folder above every folder it uses:")
        folders = sorted({folder_of(p, core_root) for p in occurrences} - {None})
        for number, layer in enumerate(layers(graph, folders)):
            print("  %d  %s" % (number, " ".join(layer)))
        return 0
    for component in found:
        print("cycle among %s:" % ", ".join(component))
        for edge in sorted(edges):
            if edge[0] in component and edge[1] in component:
                print("\n".join(describe(edge, edges[edge], limit=None)))
    return 1


if __name__ == "__main__":
    sys.exit(main())
