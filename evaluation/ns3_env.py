# SPDX-FileCopyrightText: 2026 The tofino-cc authors
# SPDX-License-Identifier: Apache-2.0
"""The one place ns-3 is imported, and the C++ glue the harness needs.

The `ns3` wheel's loader has two traps this module defuses:
- it globs shared objects under the current directory (recursively unless the
  directory holds an `ns3` folder), so importing from `/` or a big tree hangs:
  we import from the wheel's own site-packages directory;
- it drops every library whose *full path* contains "test", so a checkout or
  virtualenv under any such directory (pytest's temp dirs, a CI workspace)
  loads nothing: we run the loader with that filter applied to file names only.

Callbacks: ns-3 cannot call a Python function through its own Callback type.
The glue has two ways round that (models/speedups.py picks one per `Sim`):
- the fast path: one pair of Python dispatchers per run (an event key, a
  device number and its frame), called from C++ through the Python C API,
  plus `schedule`, `send` and `now` as built-in functions, so a packet costs
  no cppyy conversion at all;
- the reference path it replaced: a std::function (which cppyy builds from a
  Python callable, compiling a wrapper, ~0.35 s per device callback until it
  has a pool of freed ones to reuse) in a C++ lambda per event and per
  device, kept so the speed benchmark can time both.
"""

from __future__ import annotations

import importlib.util
import os
import sys
import tempfile
import types
from collections.abc import Callable
from functools import cache
from pathlib import Path
from typing import Any, NamedTuple

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

// ---- the fast path ---------------------------------------------------------
// The GIL is held throughout: Simulator::Run() is called from Python and
// cppyy does not release it.
#include <Python.h>
#include <vector>
namespace tofcc_fast {
using namespace ns3;

static PyObject* g_on_event = nullptr;  // on_event(key)
static PyObject* g_on_frame = nullptr;  // on_frame(device, frame: bytes)
static std::vector<Ptr<NetDevice>> g_devices;
// A dispatcher raised (the Python side catches everything it runs, so this
// is a bug in the dispatcher itself): printed, the run stopped, and
// dispatch_failed() tells the caller.
static bool g_failed = false;

static void Failed() {
  PyErr_Print();
  g_failed = true;
  Simulator::Stop();
}

static void Call(PyObject* fn, PyObject* args) {
  if (args == nullptr || fn == nullptr) {
    if (args == nullptr) Failed();
    Py_XDECREF(args);
    return;
  }
  PyObject* r = PyObject_Call(fn, args, nullptr);
  Py_DECREF(args);
  if (r == nullptr) Failed(); else Py_DECREF(r);
}

// Frees the devices of the previous run and takes the new run's dispatchers
// (None, None: detach).
void Start(PyObject* on_event, PyObject* on_frame) {
  g_devices.clear();
  g_failed = false;
  Py_XDECREF(g_on_event);
  Py_XDECREF(g_on_frame);
  g_on_event = on_event == Py_None ? nullptr : on_event;
  g_on_frame = on_frame == Py_None ? nullptr : on_frame;
  Py_XINCREF(g_on_event);
  Py_XINCREF(g_on_frame);
}

// The device's number for send(); its frames go to on_frame with that number.
uint32_t Attach(Ptr<NetDevice> dev) {
  uint32_t id = g_devices.size();
  g_devices.push_back(dev);
  dev->SetReceiveCallback(
      Callback<bool, Ptr<NetDevice>, Ptr<const Packet>, uint16_t, const Address&>(
          [id](Ptr<NetDevice>, Ptr<const Packet> p, uint16_t, const Address&) {
            uint32_t n = p->GetSize();
            PyObject* frame = PyBytes_FromStringAndSize(nullptr, n);
            if (frame == nullptr) { Failed(); return true; }
            p->CopyData(reinterpret_cast<uint8_t*>(PyBytes_AS_STRING(frame)), n);
            Call(g_on_frame, Py_BuildValue("(IN)", id, frame));
            return true;
          }));
  return id;
}

// schedule(delay_ns, key): on_event(key) that much later.
static PyObject* schedule(PyObject*, PyObject* const* args, Py_ssize_t nargs) {
  if (nargs != 2) {
    PyErr_SetString(PyExc_TypeError, "schedule(delay_ns, key)");
    return nullptr;
  }
  unsigned long long delay = PyLong_AsUnsignedLongLong(args[0]);
  if (PyErr_Occurred()) return nullptr;
  unsigned long long key = PyLong_AsUnsignedLongLong(args[1]);
  if (PyErr_Occurred()) return nullptr;
  Simulator::Schedule(NanoSeconds(delay), [key]() {
    Call(g_on_event, Py_BuildValue("(K)", key));
  });
  Py_RETURN_NONE;
}

// send(device, frame): our frames are whole Ethernet frames carried as the
// PPP payload; the protocol number only has to be one PPP knows.
static PyObject* send(PyObject*, PyObject* const* args, Py_ssize_t nargs) {
  if (nargs != 2) {
    PyErr_SetString(PyExc_TypeError, "send(device, frame)");
    return nullptr;
  }
  unsigned long id = PyLong_AsUnsignedLong(args[0]);
  if (PyErr_Occurred()) return nullptr;
  if (id >= g_devices.size()) {
    PyErr_Format(PyExc_IndexError, "send: no device %lu attached", id);
    return nullptr;
  }
  Py_buffer frame;  // bytes, bytearray, memoryview: what std::string took
  if (PyObject_GetBuffer(args[1], &frame, PyBUF_SIMPLE) < 0) return nullptr;
  Ptr<NetDevice> dev = g_devices[id];
  Ptr<Packet> p = Create<Packet>(static_cast<const uint8_t*>(frame.buf), frame.len);
  PyBuffer_Release(&frame);
  return PyBool_FromLong(dev->Send(p, dev->GetBroadcast(), 0x0800));
}

static PyObject* now(PyObject*, PyObject*) {
  return PyLong_FromLongLong(Simulator::Now().GetNanoSeconds());
}

static PyObject* dispatch_failed(PyObject*, PyObject*) {
  return PyBool_FromLong(g_failed);
}

static PyMethodDef g_functions[] = {
    {"schedule", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)(void)>(schedule)),
     METH_FASTCALL, "schedule(delay_ns, key)"},
    {"send", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)(void)>(send)),
     METH_FASTCALL, "send(device, frame) -> bool"},
    {"now", now, METH_NOARGS, "now() -> ns"},
    {"dispatch_failed", dispatch_failed, METH_NOARGS, "dispatch_failed() -> bool"},
    {nullptr, nullptr, 0, nullptr}};

// The built-in functions above, by name, as a dict (called once per process).
PyObject* Functions() {
  PyObject* out = PyDict_New();
  for (PyMethodDef* m = g_functions; out != nullptr && m->ml_name != nullptr; ++m) {
    PyObject* f = PyCFunction_New(m, nullptr);
    if (f == nullptr || PyDict_SetItemString(out, m->ml_name, f) < 0) {
      Py_XDECREF(f);
      Py_DECREF(out);
      return nullptr;
    }
    Py_DECREF(f);
  }
  return out;
}
}
"""


class Ns3Unavailable(RuntimeError):
    """The `ns3` wheel is not installed (pip install 'tofino-cc[eval]')."""


def _wheel_dir() -> Path:
    spec = importlib.util.find_spec("ns3")
    if spec is None or not spec.submodule_search_locations:
        raise Ns3Unavailable(
            "the ns-3 evaluation needs the 'ns3' wheel: pip install 'tofino-cc[eval]' "
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


class FastGlue(NamedTuple):
    """The fast path's C++ side (see the module docstring)."""

    # start(on_event, on_frame): a run's dispatchers; start(None, None) detaches.
    start: Callable[[Any, Any], None]
    # attach(device) -> the device's number for send() and on_frame.
    attach: Callable[[Any], int]
    schedule: Callable[[int, int], None]
    send: Callable[[int, bytes | bytearray | memoryview], bool]
    now: Callable[[], int]
    dispatch_failed: Callable[[], bool]


@cache
def fast() -> FastGlue:
    ns3()
    import cppyy

    f = cppyy.gbl.tofcc_fast
    functions = f.Functions()
    return FastGlue(
        f.Start,
        f.Attach,
        functions["schedule"],
        functions["send"],
        functions["now"],
        functions["dispatch_failed"],
    )


def reset(ns: Any) -> None:
    """Make the next simulation in this process start like the first."""
    # Drop the last run's dispatchers and devices (and all they hold).
    fast().start(None, None)
    ns.Simulator.Destroy()
    ns.Config.Reset()
    ns.RngSeedManager.ResetNextStreamIndex()
