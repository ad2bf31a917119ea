#!/usr/bin/python3
"""Runs a zkherd command and samples it, for docs/SCALE.md.

    docs/scale/measure.py OUTDIR zkherd load --spawn 5 ...

Every 2 s it reads, for the command and every process under it (the
spawned zkherd processes, the local ZooKeeper's JVM): resident memory and
its peak (VmRSS, VmHWM), CPU time, and every 30 s for the JVMs their heap
in use (jcmd GC.heap_info). Each stderr line is stamped with the seconds since the start, so the
moment the window opens (the first "running" progress line of the starter)
gives the time from start to steady state. OUTDIR gets stdout, stderr,
samples.csv and summary.json.
"""
import json, os, subprocess, sys, threading, time

out = sys.argv[1]
cmd = sys.argv[2:]
os.makedirs(out, exist_ok=True)
tick = os.sysconf("SC_CLK_TCK")


def children(pid):
    kids = []
    for p in os.listdir("/proc"):
        if not p.isdigit():
            continue
        try:
            with open(f"/proc/{p}/stat") as f:
                st = f.read()
        except OSError:
            continue
        ppid = int(st[st.rindex(")") + 2:].split()[1])
        if ppid == pid:
            kids.append(int(p))
    return kids


def tree(pid):
    todo, seen = [pid], []
    while todo:
        p = todo.pop()
        seen.append(p)
        todo.extend(children(p))
    return seen


def status(pid):
    d = {}
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                k, _, v = line.partition(":")
                if k in ("VmRSS", "VmHWM", "Name"):
                    d[k] = v.strip()
        with open(f"/proc/{pid}/stat") as f:
            st = f.read()
        fields = st[st.rindex(")") + 2:].split()
        d["cpu_s"] = (int(fields[11]) + int(fields[12])) / tick
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            d["cmd"] = f.read().replace(b"\0", b" ").decode(errors="replace")[:200]
    except (OSError, ValueError):
        return None
    return d


def heap_mb(pid):
    """The JVM's heap in use (young + old generation) and its old
    generation alone, in MiB, from jcmd GC.heap_info (the ensemble's JVMs
    run without perf data, so jstat cannot read them)."""
    try:
        r = subprocess.run(["jcmd", str(pid), "GC.heap_info"], capture_output=True, text=True, timeout=30)
    except Exception:
        return None
    young = old = None
    # "def new generation   total 116160K, used 82731K [...]"
    for line in r.stdout.splitlines():
        line = line.strip()
        if not line.startswith(("def new generation", "tenured generation")):
            continue
        words = line.replace(",", " ").split()
        used = int(words[words.index("used") + 1].rstrip("K")) / 1024
        if line.startswith("def new"):
            young = used
        else:
            old = used
    if young is None or old is None:
        return None
    return young + old, old


start = time.time()
load_start = open("/proc/loadavg").read().split()[:3]
stdout = open(os.path.join(out, "stdout"), "w")
p = subprocess.Popen(cmd, stdout=stdout, stderr=subprocess.PIPE, text=True, errors="replace")
window_open = []


def stamp():
    with open(os.path.join(out, "stderr"), "w") as f:
        for line in p.stderr:
            t = time.time() - start
            f.write(f"{t:8.2f} {line}")
            if not window_open and " running " in line and not line.startswith("["):
                window_open.append(t)


th = threading.Thread(target=stamp)
th.start()
peak = {}
last_heap = -1e9  # jcmd starts a JVM: the heap is read every 30 s only
samples = open(os.path.join(out, "samples.csv"), "w")
samples.write("t,pid,name,rss_kib,hwm_kib,cpu_s,heap_mb,old_mb\n")
while p.poll() is None:
    t = time.time() - start
    read_heap = t - last_heap >= 30
    if read_heap:
        last_heap = t
    for pid in tree(p.pid):
        s = status(pid)
        if not s or s.get("Name") not in ("zkherd", "java") or "VmRSS" not in s:  # exiting
            continue
        heap = heap_mb(pid) if s["Name"] == "java" and read_heap else None
        rss, hwm = int(s["VmRSS"].split()[0]), int(s["VmHWM"].split()[0])
        h, o = heap if heap else ("", "")
        samples.write(f"{t:.1f},{pid},{s['Name']},{rss},{hwm},{s['cpu_s']},{h and round(h)},{o and round(o)}\n")
        e = peak.setdefault(pid, {"name": s["Name"], "cmd": s["cmd"], "hwm_kib": 0, "heap_mb_max": 0, "old_mb_max": 0, "cpu": []})
        e["hwm_kib"] = max(e["hwm_kib"], hwm)
        if heap:
            e["heap_mb_max"] = round(max(e["heap_mb_max"], h))
            e["old_mb_max"] = round(max(e["old_mb_max"], o))
        e["cpu"].append((t, s["cpu_s"]))
    samples.flush()
    time.sleep(2)
th.join()
end = time.time() - start
summary = {
    "command": cmd, "exit": p.returncode, "elapsed_s": round(end, 1),
    "loadavg_start": load_start, "loadavg_end": open("/proc/loadavg").read().split()[:3],
    "window_open_s": window_open[0] if window_open else None,
    "processes": [],
}
for pid, e in peak.items():
    cpu = e.pop("cpu")
    e["pid"] = pid
    e["peak_rss_mib"] = round(e.pop("hwm_kib") / 1024)
    e["cpu_s_total"] = cpu[-1][1] if cpu else None
    summary["processes"].append(e)
json.dump(summary, open(os.path.join(out, "summary.json"), "w"), indent=1)
print(json.dumps(summary, indent=1))
