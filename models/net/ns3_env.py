"""The one place ns-3 is imported, and the C++ glue the harness needs.

The `ns3` wheel's loader has two traps this module defuses:
- it globs shared objects under the current directory (recursively unless the
  directory holds an `ns3` folder), so importing from `/` or a big tree hangs:
  we import from the wheel's own site-packages directory;
- it drops every library whose *full path* contains "test", so a checkout or
  virtualenv under any such directory (pytest's temp dirs, a CI workspace)
  loads nothing: we run the loader with that filter applied to file names only.

Callbacks: ns-3 cannot call a Python function through its own Callback type,
so the glue wraps std::function (which cppyy builds from a Python callable) in
a C++ lambda. cppyy keeps the Python callable alive as long as the
std::function lives, which is as long as the event or device callback.
"""

from __future__ import annotations

import importlib.util
import os
import sys
import tempfile
import types
from functools import cache
from pathlib import Path
from typing import Any

_GLUE = r"""
#include <functional>
#include <string>
namespace tofcc_glue {
using namespace ns3;

void Schedule(uint64_t delay_ns, std::function<void()> f) {
  Simulator::Schedule(NanoSeconds(delay_ns), [f]() { f(); });
}

// Every frame a device receives, as bytes, to one Python function.
void OnReceive(Ptr<NetDevice> dev, std::function<void(std::string)> f) {
  dev->SetReceiveCallback(
      Callback<bool, Ptr<NetDevice>, Ptr<const Packet>, uint16_t, const Address&>(
          [f](Ptr<NetDevice>, Ptr<const Packet> p, uint16_t, const Address&) {
            std::string s(p->GetSize(), '\0');
            p->CopyData(reinterpret_cast<uint8_t*>(&s[0]), s.size());
            f(s);
            return true;
          }));
}

// Our frames are whole Ethernet frames carried as the PPP payload; the
// protocol number only has to be one PPP knows.
bool Send(Ptr<NetDevice> dev, const std::string& frame) {
  Ptr<Packet> p = Create<Packet>(reinterpret_cast<const uint8_t*>(frame.data()), frame.size());
  return dev->Send(p, dev->GetBroadcast(), 0x0800);
}

uint64_t NowNs() { return Simulator::Now().GetNanoSeconds(); }
}
"""


class Ns3Unavailable(RuntimeError):
    """The `ns3` wheel is not installed (pip install -e '.[eval]')."""


def _wheel_dir() -> Path:
    spec = importlib.util.find_spec("ns3")
    if spec is None or not spec.submodule_search_locations:
        raise Ns3Unavailable(
            "the ns-3 evaluation needs the 'ns3' wheel: pip install -e '.[eval]' "
            "(it builds cppyy, so g++ and the Python headers must be installed)"
        )
    return Path(next(iter(spec.submodule_search_locations)))


def _load_ns3(pkg: Path) -> Any:
    init = pkg / "ns" / "__init__.py"
    source = init.read_text()
    # Filter test libraries by file name instead of full path.
    patched = source.replace(
        'lambda x: "test" not in x', 'lambda x: "test" not in os.path.basename(x)'
    )
    module = types.ModuleType("ns3.ns")
    module.__file__ = str(init)
    module.__package__ = "ns3.ns"
    module.__path__ = [str(init.parent)]  # type: ignore[attr-defined]
    sys.modules["ns3.ns"] = module
    try:
        exec(compile(patched, str(init), "exec"), module.__dict__)
    except BaseException:
        del sys.modules["ns3.ns"]
        raise
    sys.modules["ns"] = module
    return module.ns


@cache
def ns3() -> tuple[Any, Any]:
    """(ns, glue): the ns-3 namespace and this harness's C++ helpers."""
    pkg = _wheel_dir()
    cwd = os.getcwd()
    # cling prints "Failed to materialize symbols" for a static initialiser of
    # the wheel's own headers on every load, harmlessly; keep what the C++
    # side writes to stderr and show it only if the load fails.
    sys.stderr.flush()
    saved = os.dup(2)
    with tempfile.TemporaryFile() as err:
        os.dup2(err.fileno(), 2)
        try:
            os.chdir(pkg.parent)  # holds an `ns3` folder: a shallow, quick glob
            ns = _load_ns3(pkg)
            import cppyy  # type: ignore[import-not-found]

            cppyy.cppdef(_GLUE)
            glue = cppyy.gbl.tofcc_glue
            ns.Simulator.Destroy()  # where the initialisers run
        except BaseException:
            os.dup2(saved, 2)
            err.seek(0)
            sys.stderr.write(err.read().decode(errors="replace"))
            raise
        finally:
            os.chdir(cwd)
            os.dup2(saved, 2)
            os.close(saved)
    return ns, glue


def reset(ns: Any) -> None:
    """Make the next simulation in this process start like the first."""
    ns.Simulator.Destroy()
    ns.Config.Reset()
    ns.RngSeedManager.ResetNextStreamIndex()
