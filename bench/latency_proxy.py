#!/usr/bin/env python3
"""A TCP proxy on 127.0.0.1 that adds latency, for benchmarks on a kernel without netem.

  latency_proxy.py --upstream HOST:PORT --rtt-ms 40 [--port 0]   prints PORT=<n> once listening

Every byte is delayed by half the round trip in each direction, in order. A new connection also
pays one round trip before its first byte moves (the TCP handshake a real path would cost: on
loopback the client's connect() returns at once). Exits when stdin reaches EOF.
"""
import argparse
import asyncio
import os
import sys
import threading


async def pipe(reader, writer, delay, not_before):
    """Copies reader → writer, each chunk delivered `delay` s after it was read (and never
    before `not_before`), in order, without holding up the reads behind it."""
    loop = asyncio.get_running_loop()
    queue = asyncio.Queue()

    async def deliver():
        while True:
            due, data = await queue.get()
            wait = due - loop.time()
            if wait > 0:
                await asyncio.sleep(wait)
            if data is None:
                break
            writer.write(data)
            await writer.drain()
        try:
            writer.write_eof()
        except (OSError, RuntimeError):
            pass

    sender = asyncio.ensure_future(deliver())
    try:
        while True:
            data = await reader.read(65536)
            queue.put_nowait((max(loop.time() + delay, not_before), data or None))
            if not data:
                break
    except (ConnectionError, OSError):
        queue.put_nowait((loop.time() + delay, None))
    try:
        await sender
    except (ConnectionError, OSError):
        pass


async def serve(upstream_host, upstream_port, rtt, port):
    one_way = rtt / 2

    async def handle(client_reader, client_writer):
        loop = asyncio.get_running_loop()
        # SYN, SYN-ACK: the client could only have sent its first byte one round trip from now.
        not_before = loop.time() + rtt + one_way
        try:
            upstream_reader, upstream_writer = await asyncio.open_connection(upstream_host, upstream_port)
        except OSError:
            client_writer.close()
            return
        await asyncio.gather(pipe(client_reader, upstream_writer, one_way, not_before),
                             pipe(upstream_reader, client_writer, one_way, 0), return_exceptions=True)
        for w in (client_writer, upstream_writer):
            w.close()

    server = await asyncio.start_server(handle, "127.0.0.1", port)
    print("PORT=%d" % server.sockets[0].getsockname()[1], flush=True)
    async with server:
        await server.serve_forever()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--upstream", required=True)
    parser.add_argument("--rtt-ms", type=float, default=40)
    parser.add_argument("--port", type=int, default=0)
    args = parser.parse_args()
    host, port = args.upstream.rsplit(":", 1)

    def watch():
        while sys.stdin.buffer.read(4096):
            pass
        os._exit(0)
    threading.Thread(target=watch, daemon=True).start()
    asyncio.run(serve(host, int(port), args.rtt_ms / 1000.0, args.port))


if __name__ == "__main__":
    main()
