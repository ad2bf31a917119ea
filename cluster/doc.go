// Package cluster is what `zkherd cluster` does, apart from its flags:
// one status poll of any ensemble (Poll, with text and JSON forms and a
// health verdict), and for a local ensemble started by `cluster up`, the
// record other zkherd processes find it by (Record), the control endpoint
// through which they kill, pause, resume or restart its members (Serve,
// Do), and the watch that reports member deaths and leader changes live
// (Watch).
package cluster
