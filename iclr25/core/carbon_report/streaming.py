"""Streaming helpers of ``carbon-report power``: a background reader thread that overlaps
parsing with integration, and a row-count estimate for the progress bar."""

from __future__ import annotations

from pathlib import Path

from iclr25.core.carbon_report.power_log import open_log


def estimate_rows(path: Path) -> int:
    """Rows of a log from its size and its first lines (for the progress bar)."""
    size = path.stat().st_size
    with open_log(path, "rb") as fh:
        head = fh.read(1 << 20)
        compressed = fh.fileobj.tell() if hasattr(fh, "fileobj") else None  # gzip only
    lines = max(head.count(b"\n"), 1)
    ratio = len(head) / compressed if compressed else (5.0 if path.suffix == ".bz2" else 1.0)
    return max(1, int(size * ratio * lines / max(len(head), 1)))


def prefetch(batches, depth: int = 2):
    """Iterate ``batches`` produced by a background thread, at most ``depth`` ahead.

    Parsing (pyarrow, numpy) releases the GIL, so reading the next block overlaps with
    integrating this one; memory stays bounded by ``depth`` blocks. Exceptions from the
    producer are raised here, in order."""
    import queue
    import threading

    items: queue.Queue = queue.Queue(maxsize=depth)
    done = object()
    stop = threading.Event()

    def produce() -> None:
        try:
            for batch in batches:
                if stop.is_set():
                    return
                items.put(("batch", batch))
            items.put(("end", done))
        except BaseException as exc:  # noqa: BLE001 - handed to the consumer
            items.put(("error", exc))

    worker = threading.Thread(target=produce, name="carbon-report-reader", daemon=True)
    worker.start()
    try:
        while True:
            kind, value = items.get()
            if kind == "end":
                return
            if kind == "error":
                raise value
            yield value
    finally:
        stop.set()
        while worker.is_alive():  # unblock a producer waiting on a full queue
            try:
                items.get_nowait()
            except queue.Empty:
                worker.join(0.01)


def total_rows_estimate(paths: list[Path]) -> int:
    return sum(estimate_rows(Path(p)) for p in paths)
