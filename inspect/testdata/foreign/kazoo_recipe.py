# Drives kazoo recipes for the inspector's tests: python3 kazoo_recipe.py
# HOSTS RECIPE=PATH... Each recipe runs with a client (a session) of its
# own in a thread (it may block, as a waiter does), started in the order
# given; "OK" is printed once all have been started, and the sessions are
# closed when stdin closes. Run with /usr/bin/python3 (python3-kazoo).
import sys
import threading
import time

from kazoo.client import KazooClient

hosts = sys.argv[1]
forever = threading.Event()
clients = []


def run(zk, recipe, path):
    if recipe == "lock":
        zk.Lock(path, "kazoo").acquire()
    elif recipe == "read":
        zk.ReadLock(path, "kazoo").acquire()
    elif recipe == "write":
        zk.WriteLock(path, "kazoo").acquire()
    elif recipe == "semaphore":
        zk.Semaphore(path, "kazoo", max_leases=2).acquire()
    elif recipe == "election":
        zk.Election(path, "kazoo").run(forever.wait)
    elif recipe == "queue":
        q = zk.Queue(path)
        q.put(b"one")
        q.put(b"two")
    elif recipe == "lockingqueue":
        q = zk.LockingQueue(path)
        q.put(b"one")
        q.put(b"two")
        q.get()  # taken, never consumed: a stuck consumer
    else:
        raise SystemExit("unknown recipe " + recipe)


for arg in sys.argv[2:]:
    recipe, path = arg.split("=", 1)
    zk = KazooClient(hosts=hosts)
    zk.start(timeout=20)
    clients.append(zk)
    threading.Thread(target=run, args=(zk, recipe, path), daemon=True).start()
    time.sleep(0.3)  # in the order given: the first holds
print("OK", flush=True)
sys.stdin.read()
for zk in clients:
    zk.stop()
    zk.close()
