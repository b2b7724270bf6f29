"""`--target model`, `grpc://HOST:PORT` or `tofino-model://HOST:PORT` -> a Switch.

`grpc://` is BF-Runtime on a switch; `tofino-model://` is BF-Runtime in
front of Intel's tofino-model, whose TM reads return what was written where
an ASIC returns what its registers keep (Switch.rounds_tm_reads): BF-Runtime
has no table that tells the two apart, so the target says it."""

from __future__ import annotations

import re

from hw_profiles import HwProfile

from .errors import ConfigError
from .switch import Switch


def open_switch(
    target: str, program: str, profile: HwProfile, client_id: int = 0, read_only: bool = False
) -> Switch:
    """`client_id` and `read_only` matter to BF-Runtime only (see BfrtSwitch):
    one writer binds the program; read-only commands use an unbound client."""
    if target == "model":
        from .backends.model import ModelSwitch

        return ModelSwitch(program, profile)
    scheme, sep, address = target.partition("://")
    if sep and scheme in BFRT_SCHEMES:
        host, _, port = address.rpartition(":")
        # ASCII digits only: str.isdigit() and int() also take "５" and "²".
        if not host or not re.fullmatch(r"[0-9]{1,5}", port) or not 1 <= int(port) <= 65535:
            raise ConfigError(
                "--target", f"expected {scheme}://HOST:PORT with PORT 1..65535, got {target!r}"
            )
        from .backends.bfrt import BfrtSwitch

        return BfrtSwitch(
            program,
            profile,
            address=address,
            client_id=client_id,
            read_only=read_only,
            asic=scheme == "grpc",
        )
    raise ConfigError(
        "--target",
        f"expected 'model', grpc://HOST:PORT or tofino-model://HOST:PORT, got {target!r}",
    )


# BF-Runtime targets: a switch, or tofino-model behind bf_switchd.
BFRT_SCHEMES = ("grpc", "tofino-model")
