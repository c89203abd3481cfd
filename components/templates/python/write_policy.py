"""A kura write policy in Python.

check() sees every vault write after kura's own baseline rules have
allowed it (`.system/` reserved, `daily/` append-only: those hold
whatever this says). Return None to allow; raise Err(Denial(...)) to refuse
with a code (forbidden, conflict, invalid-path) and a message the client
sees. This starting point freezes notes under `archive/`.
"""

import wit_world
from wit_world.imports import log, types
from componentize_py_types import Err


class WitWorld(wit_world.WitWorld):
    def check(self, request: types.WriteRequest) -> None:
        if request.path.startswith("archive/"):
            log.log(log.Level.INFO, f"refused {request.kind.name} of {request.path}")
            raise Err(types.Denial(types.DenyCode.FORBIDDEN, "archive/ is frozen"))
