"""Hold one python3-kazoo lock with waiters until stdin closes.

usage: kazoo_lock.py HOSTS PATH WAITERS

One kazoo client takes the lock at PATH and keeps it; WAITERS more, each
its own session, block in acquire. Prints "OK" once all of them have their
node in the lock directory, then waits for stdin to close.
"""
import sys
import threading
import time

from kazoo.client import KazooClient

hosts, path, waiters = sys.argv[1], sys.argv[2], int(sys.argv[3])
clients = []


def client():
    c = KazooClient(hosts=hosts, timeout=20)
    c.start(timeout=20)
    clients.append(c)
    return c


holder = client().Lock(path, "holder")
holder.acquire(timeout=20)
for i in range(waiters):
    lock = client().Lock(path, "waiter-%d" % i)
    threading.Thread(target=lock.acquire, daemon=True).start()
deadline = time.time() + 30
while len(holder.contenders()) < waiters + 1:
    if time.time() > deadline:
        print("contenders: %d, want %d" % (len(holder.contenders()), waiters + 1), flush=True)
        sys.exit(1)
    time.sleep(0.05)
print("OK", flush=True)
sys.stdin.read()
for c in clients:
    try:
        c.stop()
        c.close()
    except Exception:
        pass
