"""`--target model` or `--target grpc://HOST:PORT` -> a Switch."""

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
    if target.startswith("grpc://"):
        address = target.removeprefix("grpc://")
        host, _, port = address.rpartition(":")
        # ASCII digits only: str.isdigit() and int() also take "５" and "²".
        if not host or not re.fullmatch(r"[0-9]{1,5}", port) or not 1 <= int(port) <= 65535:
            raise ConfigError(
                "--target", f"expected grpc://HOST:PORT with PORT 1..65535, got {target!r}"
            )
        from .backends.bfrt import BfrtSwitch

        return BfrtSwitch(
            program, profile, address=address, client_id=client_id, read_only=read_only
        )
    raise ConfigError("--target", f"expected 'model' or grpc://HOST:PORT, got {target!r}")
