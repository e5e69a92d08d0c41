"""cc_static_archive: one `.a` holding the object files of a cc_library's whole transitive closure.

Bazel 4.2.3 has no cc_static_library, and a cc_library's own archive holds only its own sources. This rule walks
CcInfo's linker inputs and merges every static archive it finds (preferring the PIC one, so the result can also
go into a host code's shared library) with an `ar -M` script. System libraries declared only as linkopts
(-lmpi, -lopenblas, ...) carry no archive and are left to the consumer (pkg-config's Libs.private).
"""

def _archives_of(deps):
    archives = []
    seen = {}
    for dep in deps:
        for linker_input in dep[CcInfo].linking_context.linker_inputs.to_list():
            for library in linker_input.libraries:
                archive = library.pic_static_library or library.static_library
                if archive and archive.path not in seen:
                    seen[archive.path] = True
                    archives.append(archive)
    return archives

def _cc_static_archive_impl(ctx):
    archives = _archives_of(ctx.attr.deps)
    if not archives:
        fail("cc_static_archive %s: the deps provide no static archives" % ctx.label)
    script = ctx.actions.declare_file(ctx.label.name + ".mri")
    lines = ["CREATE " + ctx.outputs.out.path]
    lines += ["ADDLIB " + archive.path for archive in archives]
    lines += ["SAVE", "END"]
    ctx.actions.write(script, "\n".join(lines) + "\n")
    ctx.actions.run_shell(
        inputs = archives + [script],
        outputs = [ctx.outputs.out],
        command = "ar -M < '%s'" % script.path,
        mnemonic = "MergeStaticArchives",
        progress_message = "Merging %d archives into %s" % (len(archives), ctx.outputs.out.short_path),
    )
    return [DefaultInfo(files = depset([ctx.outputs.out]))]

cc_static_archive = rule(
    implementation = _cc_static_archive_impl,
    attrs = {
        "deps": attr.label_list(providers = [CcInfo], mandatory = True),
        "out": attr.output(mandatory = True),
    },
)
