package inspect

import (
	"context"
	"errors"
	"fmt"
	"path"
	"slices"
	"strings"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zkherd/zkherd/internal/inert"
)

// Stat is a znode's metadata.
type Stat struct {
	Czxid, Mzxid, Pzxid         int64
	Ctime, Mtime                time.Time
	Version, Cversion, Aversion int32
	EphemeralOwner              int64
	DataLength                  int32
	NumChildren                 int32
}

func statFrom(s *zk.Stat) Stat {
	if s == nil {
		return Stat{}
	}
	return Stat{
		Czxid: s.Czxid, Mzxid: s.Mzxid, Pzxid: s.Pzxid,
		Ctime: time.UnixMilli(s.Ctime), Mtime: time.UnixMilli(s.Mtime),
		Version: s.Version, Cversion: s.Cversion, Aversion: s.Aversion,
		EphemeralOwner: s.EphemeralOwner, DataLength: s.DataLength, NumChildren: s.NumChildren,
	}
}

// ACL is one access control entry.
type ACL struct {
	Perms  string // subset of "cdrwa"
	Scheme string
	ID     string
}

func (a ACL) String() string { return a.Scheme + ":" + a.ID + " " + a.Perms }

func aclFrom(acl []zk.ACL) []ACL {
	out := make([]ACL, len(acl))
	for i, a := range acl {
		var p strings.Builder
		for _, f := range []struct {
			bit  int32
			name byte
		}{{zk.PermCreate, 'c'}, {zk.PermDelete, 'd'}, {zk.PermRead, 'r'}, {zk.PermWrite, 'w'}, {zk.PermAdmin, 'a'}} {
			if a.Perms&f.bit != 0 {
				p.WriteByte(f.name)
			}
		}
		out[i] = ACL{Perms: p.String(), Scheme: a.Scheme, ID: a.ID}
	}
	return out
}

// Children is one directory listing.
type Children struct {
	Path  string
	Names []string // sorted
	Stat  Stat
}

// Children lists path's children once, sorted, and follows the path: a
// Change says when the listing is stale (follow.go; no watch is set). Large listings are returned whole: page them in the
// caller, never re-fetch per frame. An ACL that denies reading the list
// gives ErrNoAccess.
func (in *Inspector) Children(ctx context.Context, p string) (Children, error) {
	c, err := in.conn(ctx)
	if err != nil {
		return Children{}, err
	}
	abs := in.abs(p)
	type res struct {
		names []string
		stat  *zk.Stat
	}
	r, err := call(ctx, func() (res, error) {
		names, stat, err := c.Children(abs)
		return res{names, stat}, err
	})
	if err != nil {
		return Children{}, wrapErr("list", p, err)
	}
	in.follow(abs, r.stat, false, true)
	slices.Sort(r.names)
	ch := Children{Path: p, Names: r.names, Stat: statFrom(r.stat)}
	inert.All(&ch)
	return ch, nil
}

// Node is one znode's stat, data and ACL.
type Node struct {
	Path string
	Stat Stat
	Data []byte
	// NoAccess is true when the ACL denies reading the data; Stat is still
	// filled (exists needs no permission).
	NoAccess bool
	ACL      []ACL
	ACLErr   string // why the ACL could not be read
}

// Node reads path's stat, data and ACL, and follows the path, so that a
// Change reports its next modification or deletion (follow.go; no watch
// is set).
func (in *Inspector) Node(ctx context.Context, p string) (Node, error) {
	c, err := in.conn(ctx)
	if err != nil {
		return Node{}, err
	}
	abs := in.abs(p)
	n := Node{Path: p}
	type res struct {
		data []byte
		stat *zk.Stat
	}
	r, err := call(ctx, func() (res, error) {
		data, stat, err := c.Get(abs)
		return res{data, stat}, err
	})
	switch {
	case errors.Is(err, zk.ErrNoAuth):
		n.NoAccess = true
		r, err = call(ctx, func() (res, error) {
			ok, stat, err := c.Exists(abs)
			if err == nil && !ok {
				err = zk.ErrNoNode
			}
			return res{nil, stat}, err
		})
		if err != nil {
			return Node{}, wrapErr("stat", p, err)
		}
	case err != nil:
		return Node{}, wrapErr("read", p, err)
	}
	in.follow(abs, r.stat, true, false)
	n.Stat, n.Data = statFrom(r.stat), r.data
	acl, err := call(ctx, func() ([]zk.ACL, error) {
		acl, _, err := c.GetACL(abs)
		return acl, err
	})
	switch {
	case errors.Is(err, zk.ErrNoAuth):
		n.ACLErr = "no access"
	case err != nil:
		n.ACLErr = err.Error()
	default:
		n.ACL = aclFrom(acl)
	}
	inert.All(&n) // ACL schemes and ids are anyone's text
	return n, nil
}

// Delete removes path if its version is still version (-1: any). It
// fails with ErrReadOnly unless the inspector allows writes.
func (in *Inspector) Delete(ctx context.Context, p string, version int32) error {
	if !in.opts.AllowWrites {
		return ErrReadOnly
	}
	if p == "/" || p == "" {
		return fmt.Errorf("inspect: refusing to delete the root")
	}
	c, err := in.conn(ctx)
	if err != nil {
		return err
	}
	_, err = call(ctx, func() (struct{}, error) { return struct{}{}, c.Delete(in.abs(p), version) })
	if err != nil {
		return wrapErr("delete", p, err)
	}
	return nil
}

// SetData replaces path's data if its version is still version (-1: any).
// It fails with ErrReadOnly unless the inspector allows writes.
func (in *Inspector) SetData(ctx context.Context, p string, data []byte, version int32) error {
	if !in.opts.AllowWrites {
		return ErrReadOnly
	}
	c, err := in.conn(ctx)
	if err != nil {
		return err
	}
	_, err = call(ctx, func() (*zk.Stat, error) { return c.Set(in.abs(p), data, version) })
	if err != nil {
		return wrapErr("set data of", p, err)
	}
	return nil
}

func sortChanges(cs []Change) {
	slices.SortFunc(cs, func(a, b Change) int { return strings.Compare(a.Path, b.Path) })
}

// CreateMode is how Create makes a node.
type CreateMode struct {
	Ephemeral, Sequential bool
}

func (m CreateMode) flags() int32 {
	var f int32
	if m.Ephemeral {
		f |= zk.FlagEphemeral
	}
	if m.Sequential {
		f |= zk.FlagSequence
	}
	return f
}

// String names the mode as zkCli does: persistent, ephemeral,
// persistent_sequential, ephemeral_sequential.
func (m CreateMode) String() string {
	s := "persistent"
	if m.Ephemeral {
		s = "ephemeral"
	}
	if m.Sequential {
		s += "_sequential"
	}
	return s
}

// Create makes path with data, open to everyone (world:anyone:cdrwa) as
// zkCli does by default, and returns the path created (with its sequence
// suffix for a sequential node). An ephemeral node belongs to the
// inspector's session: it goes when the inspector exits.
func (in *Inspector) Create(ctx context.Context, p string, data []byte, mode CreateMode) (string, error) {
	if !in.opts.AllowWrites {
		return "", ErrReadOnly
	}
	c, err := in.conn(ctx)
	if err != nil {
		return "", err
	}
	abs := in.abs(p)
	made, err := call(ctx, func() (string, error) { return c.Create(abs, data, mode.flags(), zk.WorldACL(zk.PermAll)) })
	if err != nil {
		return "", wrapErr("create", p, err)
	}
	rel, _ := in.rel(made)
	return rel, nil
}

// ParseACL reads an ACL as zkCli writes it: comma-separated
// scheme:id:perms entries, e.g. "world:anyone:cdrwa,ip:10.0.0.1:r" or
// "digest:user:hash=:cdrwa" (the id may hold colons; perms are the last part).
func ParseACL(s string) ([]zk.ACL, error) {
	var out []zk.ACL
	for _, entry := range strings.Split(strings.TrimSpace(s), ",") {
		scheme, rest, ok := strings.Cut(strings.TrimSpace(entry), ":")
		i := strings.LastIndexByte(rest, ':')
		if !ok || scheme == "" || i <= 0 {
			return nil, fmt.Errorf("inspect: ACL %q: want scheme:id:perms, e.g. world:anyone:cdrwa", entry)
		}
		id, perms := rest[:i], rest[i+1:]
		var bits int32
		for _, r := range perms {
			switch r {
			case 'c':
				bits |= zk.PermCreate
			case 'd':
				bits |= zk.PermDelete
			case 'r':
				bits |= zk.PermRead
			case 'w':
				bits |= zk.PermWrite
			case 'a':
				bits |= zk.PermAdmin
			default:
				return nil, fmt.Errorf("inspect: ACL %q: permission %q is none of c, d, r, w, a", entry, r)
			}
		}
		if bits == 0 {
			return nil, fmt.Errorf("inspect: ACL %q: no permission given (use some of cdrwa)", entry)
		}
		out = append(out, zk.ACL{Perms: bits, Scheme: scheme, ID: id})
	}
	return out, nil
}

// SetACL replaces path's ACL if its ACL version is still aversion (-1: any).
func (in *Inspector) SetACL(ctx context.Context, p string, acl []zk.ACL, aversion int32) error {
	if !in.opts.AllowWrites {
		return ErrReadOnly
	}
	c, err := in.conn(ctx)
	if err != nil {
		return err
	}
	_, err = call(ctx, func() (*zk.Stat, error) { return c.SetACL(in.abs(p), acl, aversion) })
	if err != nil {
		return wrapErr("set ACL of", p, err)
	}
	return nil
}

// MaxTreeCount bounds the subtrees PlanDelete counts: a subtree larger
// than this is not deleted from the inspector.
const MaxTreeCount = 1_000_000

// ErrTreeTooLarge is returned by PlanDelete past MaxTreeCount nodes.
var ErrTreeTooLarge = fmt.Errorf("inspect: more than %d nodes under this path: too many to delete from here", MaxTreeCount)

// tree lists path's subtree level by level: levels[0] is {path}, each next
// level the children of the previous one.
func (in *Inspector) tree(ctx context.Context, p string) ([][]string, int, error) {
	c, err := in.conn(ctx)
	if err != nil {
		return nil, 0, err
	}
	root := in.abs(p)
	if ok, _, err := c.Exists(root); err != nil || !ok {
		if err == nil {
			err = zk.ErrNoNode
		}
		return nil, 0, wrapErr("count", p, err)
	}
	levels := [][]string{{root}}
	total := 1
	for level := levels[0]; len(level) > 0; {
		type res struct {
			kids []string
			err  error
		}
		// A subtree is listed at most once, on the user's request: deeper
		// pipelining than the periodic scan's, to count 50,000 leaves in
		// seconds.
		results := pipelinedN(ctx, 4*pipelineDepth, level, func(dir string) res {
			names, _, err := c.Children(dir)
			if errors.Is(err, zk.ErrNoNode) {
				return res{} // deleted meanwhile
			}
			kids := make([]string, len(names))
			for i, n := range names {
				kids[i] = path.Join(dir, n)
			}
			return res{kids, err}
		})
		var next []string
		for _, r := range results {
			if r.err != nil {
				return nil, 0, wrapErr("list under", p, r.err)
			}
			next = append(next, r.kids...)
		}
		if ctx.Err() != nil {
			return nil, 0, ctx.Err()
		}
		total += len(next)
		if total > MaxTreeCount {
			return nil, 0, ErrTreeTooLarge
		}
		if len(next) > 0 {
			levels = append(levels, next)
		}
		level = next
	}
	return levels, total, nil
}

// deleteBatch is how many deletes go in one multi: ZooKeeper applies a
// multi as one transaction, so 50,000 children cost 50 requests, not
// 50,000; the batch stays far below the 1 MB request limit.
const deleteBatch = 1000

// DeleteTree deletes path and everything under it, deepest level first,
// in multis of deleteBatch, and returns how many nodes it deleted. Nodes
// created under path meanwhile make it fail with the count so far.
func (in *Inspector) DeleteTree(ctx context.Context, p string) (int, error) {
	if !in.opts.AllowWrites {
		return 0, ErrReadOnly
	}
	if p == "/" || p == "" || in.abs(p) == "/zookeeper" {
		return 0, fmt.Errorf("inspect: refusing to delete %s", p)
	}
	levels, _, err := in.tree(ctx, p)
	if err != nil {
		return 0, err
	}
	c, err := in.conn(ctx)
	if err != nil {
		return 0, err
	}
	deleted := 0
	for i := len(levels) - 1; i >= 0; i-- {
		level := levels[i]
		var batches [][]string
		for lo := 0; lo < len(level); lo += deleteBatch {
			batches = append(batches, level[lo:min(lo+deleteBatch, len(level))])
		}
		type res struct {
			n   int
			err error
		}
		results := pipelined(ctx, batches, func(batch []string) res {
			ops := make([]any, len(batch))
			for j, q := range batch {
				ops[j] = &zk.DeleteRequest{Path: q, Version: -1}
			}
			if _, err := c.Multi(ops...); err != nil {
				return res{0, err}
			}
			return res{len(batch), nil}
		})
		for _, r := range results {
			deleted += r.n
			if r.err != nil && err == nil {
				err = r.err
			}
		}
		if err != nil {
			return deleted, wrapErr("delete under", p, err)
		}
		if ctx.Err() != nil {
			return deleted, ctx.Err()
		}
	}
	return deleted, nil
}
