"""Sluice's version has one source, the VERSION file at the top of the workspace ("MAJOR.MINOR.PATCH").

`version_header` fills a template from it, as NCCL fills nccl.h from nccl.h.in: the C header, the Fortran module and
core/common/version.h are generated, so none of them can disagree with VERSION or with each other. Placeholders:
@SLUICE_VERSION_MAJOR@, @SLUICE_VERSION_MINOR@, @SLUICE_VERSION_PATCH@ (decimal integers), @SLUICE_VERSION_CODE@
(MAJOR * 10000 + MINOR * 100 + PATCH, what sluice_version() returns) and @SLUICE_VERSION@ (the text "0.1.0").
The build fails if VERSION is not three integers (MINOR and PATCH below 100) or a placeholder is left over.
"""

def version_header(name, src, out, **kwargs):
    native.genrule(
        name = name,
        srcs = [src, "//:VERSION"],
        outs = [out],
        cmd = " && ".join([
            "version=$$(tr -d ' \\t\\r\\n' < $(location //:VERSION))",
            "if ! [[ $$version =~ ^([0-9]+)\\.([0-9]|[1-9][0-9])\\.([0-9]|[1-9][0-9])$$ ]]; then " +
            "echo \"VERSION must be MAJOR.MINOR.PATCH (MINOR, PATCH < 100), got '$$version'\" >&2; exit 1; fi",
            "major=$${BASH_REMATCH[1]} minor=$${BASH_REMATCH[2]} patch=$${BASH_REMATCH[3]}",
            "code=$$((10#$$major * 10000 + 10#$$minor * 100 + 10#$$patch))",
            "sed -e \"s/@SLUICE_VERSION_MAJOR@/$$major/g\" -e \"s/@SLUICE_VERSION_MINOR@/$$minor/g\" " +
            "-e \"s/@SLUICE_VERSION_PATCH@/$$patch/g\" -e \"s/@SLUICE_VERSION_CODE@/$$code/g\" " +
            "-e \"s/@SLUICE_VERSION@/$$version/g\" $(location " + src + ") > $@",
            "if grep -n '@SLUICE_[A-Z_]*@' $@ >&2; then echo \"$(location " + src +
            "): unknown placeholder left\" >&2; exit 1; fi",
        ]),
        **kwargs
    )
