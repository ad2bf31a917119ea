#!/bin/bash
# Same fair-lock run with and without the TUI, alternating, against one ensemble.
set -u
Z=${ZKHERD:-/tmp/zkherd}
CS=$1; CL=$2; DUR=$3
for i in 1 2; do
  rm -rf /tmp/tb-notui-$i /tmp/tb-tui-$i
  $Z load --server $CS --scenario fair-lock --clients $CL --duration $DUR --no-tui --out /tmp/tb-notui-$i >/dev/null 2>&1
  tmux -L tb new-session -d -s tb -x 120 -y 40 "$Z load --server $CS --scenario fair-lock --clients $CL --duration $DUR --out /tmp/tb-tui-$i; sleep 5"
  for t in $(seq 1 300); do
    tmux -L tb capture-pane -p -t tb 2>/dev/null | grep -Eq "finished after|· done ·" && break; sleep 1
  done
  tmux -L tb send-keys -t tb q; sleep 6; tmux -L tb kill-server 2>/dev/null
  a=$(grep -o '"throughput_per_s": *[0-9.]*' /tmp/tb-notui-$i/report.json | head -1 | grep -o '[0-9.]*$')
  b=$(grep -o '"throughput_per_s": *[0-9.]*' /tmp/tb-tui-$i/report.json | head -1 | grep -o '[0-9.]*$')
  echo "round $i: no-tui $a/s  tui $b/s"
done
