"""Is there a Dask scheduler at an address? Asked before a client connects to an existing
scheduler (``session``): distributed's Client waits for ever on a peer that accepts the
connection and never speaks Dask."""

from __future__ import annotations

import threading
import time

from ..errors import RunError


def _reachable(address: str, timeout: float) -> None:
    """RunError unless something accepts a TCP connection at ``address`` within ``timeout``
    s (tried again while it is refused: a scheduler may still be starting)."""
    import socket

    from distributed.comm.addressing import parse_address, parse_host_port

    scheme, loc = parse_address(address)
    if scheme != "tcp":
        return  # tls, ws ...: distributed's own connect says why
    host, port = parse_host_port(loc)
    deadline = time.monotonic() + timeout
    while True:
        try:
            socket.create_connection((host, port), timeout=max(0.1, deadline -
                                                                time.monotonic())).close()
            return
        except OSError as e:
            if time.monotonic() >= deadline:
                raise RunError(f"cannot reach the Dask scheduler at {address}: "
                               f"{e.strerror or e} (for {timeout:g} s)") from None
            time.sleep(0.2)


def _run_apart(coroutine_fn):
    """``asyncio.run(coroutine_fn())`` on a thread of its own: the caller's thread may
    already run an event loop (a notebook, a test driving a browser), where asyncio.run
    refuses to start another."""
    import asyncio

    box: dict[str, object] = {}

    def target() -> None:
        try:
            box["value"] = asyncio.run(coroutine_fn())
        except BaseException as e:  # noqa: BLE001 -- handed back to the caller's thread
            box["error"] = e

    t = threading.Thread(target=target, name="scheduler-probe")
    t.start()
    t.join()
    if "error" in box:
        raise box["error"]
    return box["value"]


def probe_scheduler(address: str, timeout: float) -> None:
    """RunError unless a Dask scheduler answers its identity at ``address`` within
    ``timeout`` s: distributed's Client waits for ever on a peer that accepts the connection
    and never speaks Dask (an HTTP server, a silent listener)."""
    import asyncio

    from distributed.comm import connect

    async def identity() -> object:
        comm = await connect(address, timeout=timeout)
        try:
            await comm.write({"op": "identity", "reply": True})
            return await comm.read()
        finally:
            comm.abort()

    async def bounded() -> object:
        return await asyncio.wait_for(identity(), timeout)

    _reachable(address, timeout)
    try:
        reply = _run_apart(bounded)
    except (TimeoutError, asyncio.TimeoutError):
        raise RunError(f"no Dask scheduler answered at {address} within {timeout:g} s "
                       "(connect timeout): is it a Dask scheduler?") from None
    except Exception as e:  # refused, reset, or a peer that speaks another protocol
        raise RunError(f"cannot reach the Dask scheduler at {address}: "
                       f"{type(e).__name__}: {e}") from None
    if not (isinstance(reply, dict) and reply.get("type") == "Scheduler"):
        raise RunError(f"{address} answered, but not as a Dask scheduler")
