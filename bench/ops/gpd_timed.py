"""The GeoPandas side of the ops benchmarks: one operation timed in a forked child.

The child runs the operation n times and sends each time, then a summary of the last result, so
that a run past the timeout (or one that dies, e.g. killed for memory) is cut off here instead
of hanging the benchmark. Only the operation is timed: reading the source happens before.
"""
import multiprocessing
import time


def best_of(operation, summarize, n, timeout):
    """(seconds, summary): the best of n runs of operation() as text ("FAIL" when the child died
    before any run ended, ">TIMEOUT" when no run ended in time) and summarize(last result), or
    None when the runs did not all end."""

    def child(conn):
        out = None
        for _ in range(n):
            start = time.perf_counter()
            out = operation()
            conn.send(time.perf_counter() - start)
        conn.send(summarize(out))

    ctx = multiprocessing.get_context("fork")
    receive, send = ctx.Pipe(duplex=False)
    process = ctx.Process(target=child, args=(send,))
    process.start()
    send.close()  # so that a child that dies is an EOF here
    best, summary, failed = None, None, False
    try:
        for _ in range(n):
            if not receive.poll(timeout):
                break
            seconds = receive.recv()
            best = seconds if best is None or seconds < best else best
        else:
            if receive.poll(timeout):
                summary = receive.recv()
    except EOFError:
        failed = True
    process.kill()
    process.join()
    if best is None:
        return ("FAIL" if failed else f">{timeout:g}"), summary
    return f"{best:.3f}", summary
