# Drives one kazoo recipe for the inspector's tests: python3 kazoo_recipe.py
# HOSTS RECIPE PATH. The recipe is started in a thread (it may block, as a
# waiter does); "OK" is printed once it has been started, and the session
# is closed when stdin closes. Run with /usr/bin/python3 (python3-kazoo).
import sys
import threading

from kazoo.client import KazooClient

hosts, recipe, path = sys.argv[1], sys.argv[2], sys.argv[3]
zk = KazooClient(hosts=hosts)
zk.start(timeout=20)
forever = threading.Event()


def run():
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


threading.Thread(target=run, daemon=True).start()
print("OK", flush=True)
sys.stdin.read()
zk.stop()
zk.close()
