package inspect

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"path"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zkherd/zkherd/internal/exit"
	"github.com/zkherd/zkherd/internal/inert"
	"github.com/zkherd/zkherd/recipes"
)

// Defaults for Options.
const (
	DefaultPollInterval = time.Second
	DefaultPollTimeout  = 2 * time.Second
	// DefaultMaxScanDirs bounds the tree walk that looks for locks and
	// queues: at most this many getChildren calls per scan.
	DefaultMaxScanDirs = 2000
	// DefaultMaxScanFanout: directories with more children than this are
	// parsed (they may be locks or queues) but not descended into.
	DefaultMaxScanFanout = 1000
	// DefaultRescanEvery is how many polls pass between walks of the tree;
	// in between, only the directories already found are re-read. A walk
	// costs up to MaxScanDirs small requests (an exists each, a listing
	// only where the children changed): 2,000 every 30 s is ~67 a second.
	DefaultRescanEvery = 30
	// DefaultStatLimit bounds how many nodes of one lock are stat-ed for
	// their age; the rest of a long chain shows owner (from dump) but no age.
	DefaultStatLimit = 500
	// receiveBuffer is the largest reply accepted: a child list of a few
	// hundred thousand names, or a large node.
	receiveBuffer = 64 << 20
)

var (
	// ErrReadOnly is returned by writes when Options.AllowWrites is false.
	ErrReadOnly = errors.New("inspect: read-only (writes are not allowed)")
	// ErrNoAccess means the node's ACL denies this session.
	ErrNoAccess = errors.New("inspect: no access")
	// ErrClosed is returned after Close.
	ErrClosed = errors.New("inspect: closed")
)

// Options configure Open.
type Options struct {
	// Servers are "host:port" addresses of the ensemble members; every one
	// is polled with four-letter words.
	Servers []string
	// AdminURLs optionally maps a server address to its AdminServer
	// ("http://127.0.0.1:8080"), asked when a four-letter word is refused.
	AdminURLs map[string]string
	// Chroot, when set, is prefixed to every path; 4lw output outside it is
	// ignored.
	Chroot string
	// SessionTimeout defaults to recipes.DefaultSessionTimeout.
	SessionTimeout time.Duration
	// Auth is digest credentials "user:password" (optional).
	Auth string
	// TLS, when set, reaches the servers over TLS: the session, the
	// four-letter words and https AdminURLs (see connstr.TLS.Config).
	TLS *tls.Config
	// AllowWrites enables Delete and SetData.
	AllowWrites bool
	// PollInterval is the time between snapshots. Defaults to DefaultPollInterval.
	PollInterval time.Duration
	// PollTimeout bounds each member's poll. Defaults to DefaultPollTimeout.
	PollTimeout time.Duration
	// ScanRoots are where locks and queues are looked for. Defaults to "/".
	ScanRoots []string
	// NoWatches never asks the servers who watches what (wchp): waiters
	// then show "watch unknown" and no herd is found.
	NoWatches bool
	// WatchBudget: a member holding more watches than this is not asked
	// wchp. Defaults to DefaultWatchBudget; negative means no limit.
	WatchBudget int
	// HerdThreshold defaults to DefaultHerdThreshold.
	HerdThreshold int
	// MaxScanDirs, MaxScanFanout, RescanEvery and StatLimit bound the lock
	// and queue scan; they default to the Default* constants.
	MaxScanDirs   int
	MaxScanFanout int
	RescanEvery   int
	StatLimit     int
	// Name names a value the user gave ("auth", "no-watches") in the
	// notices, as the command calls it (package main: its flag); nil
	// names it bare. A library never names a flag itself (exit.Advice).
	Name func(input string) string
	// StillCap is the longest a lock or queue directory whose children
	// did not change is left unread (still.go). Defaults to DefaultStillCap
	// or 4 poll intervals, whichever is longer.
	StillCap time.Duration
	// WalkRate is the cost units a second (a request, or 100 names
	// listed) that the tree walk and the searches spend together
	// (treePacer). Defaults to DefaultWalkRate.
	WalkRate int
}

// Inspector reads one ensemble. Its methods are safe for concurrent use.
type Inspector struct {
	opts   Options
	poller *fourlwPoller

	mu     sync.Mutex
	sess   *recipes.Session
	closed bool

	watchMu  sync.Mutex
	followed []followed // paths re-checked each snapshot, newest first (follow.go)
	// markerArmed is the connection whose session holds the inspector
	// marker's watch (nil: to be armed).
	markerArmed *zk.Conn
	pending     map[string]ChangeKind
	notify      chan struct{} // 1 slot: "pending is not empty"

	// shown is what the views on screen show (SetShown); nil until set:
	// defaultShown.
	shown atomic.Pointer[Shown]
	// followChecked is when the followed paths were last checked (scanMu).
	followChecked time.Time

	scanMu  sync.Mutex
	scan    scanState
	watches []watchPoll        // per member, guarded by scanMu
	lowest  map[string]float64 // lowest recent latency per member, guarded by scanMu
	backoff int                // poll interval multiplier, guarded by scanMu
	// earlyPolled is when an early snapshot last started polls (scanMu).
	earlyPolled time.Time
	walker      walker // background tree walk, guarded by scanMu
	// pacer paces the walk and the searches together (treePacer).
	pacer treePacer
	// walkTruncated: the last walk stopped at MaxScanDirs (scanMu).
	walkTruncated bool
}

// ChangeKind says what a watch reported.
type ChangeKind uint8

// Change kinds (a bit set: one path can have several).
const (
	ChangedData ChangeKind = 1 << iota
	ChangedChildren
	ChangedDeleted
	ChangedCreated
)

// Change is a watch notification on a path the caller looked at.
type Change struct {
	Path string // relative to the chroot
	Kind ChangeKind
}

// Open connects to the ensemble and returns once a session is established.
func Open(ctx context.Context, opts Options) (*Inspector, error) {
	if len(opts.Servers) == 0 {
		return nil, errors.New("inspect: no server given")
	}
	opts.Chroot = strings.TrimSuffix(opts.Chroot, "/")
	in := &Inspector{
		opts:    opts,
		pending: map[string]ChangeKind{},
		notify:  make(chan struct{}, 1),
	}
	in.watches = make([]watchPoll, len(opts.Servers))
	for i := range in.watches {
		in.watches[i].count = -1
	}
	in.lowest, in.backoff = map[string]float64{}, 1
	in.pacer.rate = float64(in.walkRate())
	c, err := in.conn(ctx)
	if err != nil {
		return nil, err
	}
	in.markSession(ctx, c)
	in.poller = newPoller(opts.Servers, opts.AdminURLs, opts.TLS, in.pollTimeout())
	return in, nil
}

func (in *Inspector) pollInterval() time.Duration {
	if in.opts.PollInterval > 0 {
		return in.opts.PollInterval
	}
	return DefaultPollInterval
}

func (in *Inspector) walkRate() int {
	if in.opts.WalkRate > 0 {
		return in.opts.WalkRate
	}
	return DefaultWalkRate
}

func (in *Inspector) pollTimeout() time.Duration {
	if in.opts.PollTimeout > 0 {
		return in.opts.PollTimeout
	}
	return DefaultPollTimeout
}

// session returns the live session, opening a new one if the last expired.
func (in *Inspector) session(ctx context.Context) (*recipes.Session, error) {
	in.mu.Lock()
	defer in.mu.Unlock()
	if in.closed {
		return nil, ErrClosed
	}
	if in.sess != nil {
		select {
		case <-in.sess.Done():
			in.sess = nil
		default:
			return in.sess, nil
		}
	}
	opts := []recipes.SessionOption{
		recipes.WithBufferSizes(recipes.DefaultBufferSize, receiveBuffer),
		recipes.WithEventObserver(in.onEvent),
	}
	if in.opts.SessionTimeout > 0 {
		opts = append(opts, recipes.WithSessionTimeout(in.opts.SessionTimeout))
	}
	if in.opts.Auth != "" {
		opts = append(opts, recipes.WithDigestAuth(in.opts.Auth))
	}
	if in.opts.TLS != nil {
		opts = append(opts, recipes.WithTLS(in.opts.TLS))
	}
	s, err := recipes.NewSession(ctx, in.opts.Servers, opts...)
	if err != nil {
		return nil, fmt.Errorf("inspect: %w", err)
	}
	in.sess = s
	return s, nil
}

func (in *Inspector) conn(ctx context.Context) (*zk.Conn, error) {
	s, err := in.session(ctx)
	if err != nil {
		return nil, err
	}
	return s.Conn(), nil
}

// SessionID is the inspector's own session, so views can tell it apart.
func (in *Inspector) SessionID() int64 {
	in.mu.Lock()
	defer in.mu.Unlock()
	if in.sess == nil {
		return 0
	}
	return in.sess.ID()
}

// Shown says which of the inspector's answers the views on screen show.
// What no view shows is asked of the servers less often, or not at all:
// each question is one more request that meets other clients' at the
// server (issues 24 and 26, the production cost budget).
type Shown struct {
	// Watches: who waits on what (the Locks and Sessions views, the
	// exporter's herd gauge). The servers' watch lists (wchp, the
	// costliest question) are asked only meanwhile.
	Watches bool
	// Sessions: the sessions with their clients and ephemerals (the
	// Sessions view). Meanwhile cons and dump are asked every pacedShare
	// times their cost, at most maxPaced apart; otherwise idleShare
	// times, at most idlePaced apart (cost.go).
	Sessions bool
	// Servers: the members' figures (the Servers view, the exporter's
	// server metrics). Meanwhile srvr is asked every srvrPeriod and mntr
	// as cons; otherwise srvr every srvrIdle and mntr as cons unshown.
	Servers bool
	// Tree: the followed paths (the Tree's listing and node), checked
	// every snapshot meanwhile, else once every still directory's cap
	// (stillCap, 8 s on the terminal's polls; checkFollowed): unshown,
	// each check was a request a second that met other clients' at the
	// server (in the Locks view with the Tree's root listing and one node
	// followed, 2 of the inspector's requests a second). A change
	// meanwhile is reported up to that late; the first snapshot after the
	// Tree is shown again checks them all.
	Tree bool
}

// defaultShown is what an inspector asks before SetShown: everything at
// the pace of a view that shows it, except the watch lists.
var defaultShown = Shown{Sessions: true, Servers: true, Tree: true}

// SetShown says what the views on screen show (Shown).
func (in *Inspector) SetShown(s Shown) { in.shown.Store(&s) }

// showing is what the views show now.
func (in *Inspector) showing() Shown {
	if s := in.shown.Load(); s != nil {
		return *s
	}
	return defaultShown
}

func (in *Inspector) watchBudget() int {
	if in.opts.WatchBudget != 0 {
		return in.opts.WatchBudget
	}
	return DefaultWatchBudget
}

// InputName is how the command names the value the user gave as input
// (Options.Name): the views name it so in their own notices.
func (in *Inspector) InputName(input string) string {
	if in.opts.Name == nil {
		return input
	}
	return in.opts.Name(input)
}

// advice is a notice naming the inputs written {name} in format as the
// command calls them (exit.Advice).
func (in *Inspector) advice(format string, args ...any) string {
	return exit.Advice(in.opts.Name, format, args...)
}

// Writable reports whether Delete and SetData are allowed.
func (in *Inspector) Writable() bool { return in.opts.AllowWrites }

// Servers are the members polled.
func (in *Inspector) Servers() []string { return in.opts.Servers }

// Close stops polling and ends the session. Idempotent.
func (in *Inspector) Close() {
	in.mu.Lock()
	defer in.mu.Unlock()
	if in.closed {
		return
	}
	in.closed = true
	if in.poller != nil {
		in.poller.stop()
	}
	if c := in.walker.cancel; c != nil {
		c()
	}
	in.mu.Unlock()
	in.walker.wg.Wait() // the walk ends on its own once cancelled
	in.mu.Lock()
	if in.sess != nil {
		in.sess.Close()
		in.sess = nil
	}
}

// abs maps a path relative to the chroot, as the inspector shows it (a
// format character in a name escaped by package inert), to a server path.
func (in *Inspector) abs(p string) string {
	p = inert.Unescape(p)
	if in.opts.Chroot == "" {
		return path.Clean("/" + p)
	}
	return path.Clean(in.opts.Chroot + "/" + p)
}

// rel maps a server path to one relative to the chroot; ok is false for
// paths outside it.
func (in *Inspector) rel(p string) (string, bool) {
	c := in.opts.Chroot
	switch {
	case c == "":
		return p, true
	case p == c:
		return "/", true
	case strings.HasPrefix(p, c+"/"):
		return p[len(c):], true
	}
	return "", false
}

// call runs a blocking go-zookeeper request and returns early when ctx ends
// (the request itself ends with the connection's own timeouts).
func call[T any](ctx context.Context, f func() (T, error)) (T, error) {
	type result struct {
		v   T
		err error
	}
	done := make(chan result, 1)
	go func() {
		v, err := f()
		done <- result{v, err}
	}()
	select {
	case r := <-done:
		return r.v, r.err
	case <-ctx.Done():
		var zero T
		return zero, ctx.Err()
	}
}

func wrapErr(op, p string, err error) error {
	if errors.Is(err, zk.ErrNoAuth) {
		return inertErr{fmt.Errorf("inspect: %s %s: %w", op, p, ErrNoAccess)}
	}
	return inertErr{fmt.Errorf("inspect: %s %s: %w", op, p, err)}
}

// inertErr is an error whose text is safe to print (package inert): its
// text may hold a path, or what a server or the network said.
type inertErr struct{ err error }

func (e inertErr) Error() string { return inert.String(e.err.Error()) }
func (e inertErr) Unwrap() error { return e.err }

// onEvent notes that the inspector marker's watch fired (someone created
// or deleted the marker node), so that the next snapshot arms it again;
// called by go-zookeeper's receive loop, so it only updates a field. The
// inspector sets no other watch (follow.go).
func (in *Inspector) onEvent(ev zk.Event) {
	if ev.Type == zk.EventSession || !isMarker(ev.Path) {
		return
	}
	in.watchMu.Lock()
	in.markerArmed = nil
	in.watchMu.Unlock()
}

// Changes is signalled when watch notifications are waiting in TakeChanges.
// Several notifications may come with one signal; none is lost.
func (in *Inspector) Changes() <-chan struct{} { return in.notify }

// TakeChanges returns and clears the notifications received so far, one
// per path, sorted by path.
func (in *Inspector) TakeChanges() []Change {
	in.watchMu.Lock()
	defer in.watchMu.Unlock()
	out := make([]Change, 0, len(in.pending))
	for p, k := range in.pending {
		out = append(out, Change{Path: p, Kind: k})
	}
	clear(in.pending)
	sortChanges(out)
	inert.All(&out)
	return out
}
