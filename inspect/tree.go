package inspect

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/go-zookeeper/zk"
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
	// Watched is true when a child watch is armed on Path: a Change will
	// say when the listing is stale.
	Watched bool
}

// Children lists path's children once, sorted, and arms a child watch on
// it if none is armed. Large listings are returned whole: page them in the
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
	arm, undo := in.arm(in.childWatched, abs)
	r, err := call(ctx, func() (res, error) {
		if arm {
			names, stat, _, err := c.ChildrenW(abs)
			return res{names, stat}, err
		}
		names, stat, err := c.Children(abs)
		return res{names, stat}, err
	})
	if err != nil {
		if arm {
			undo()
		}
		return Children{}, wrapErr("list", p, err)
	}
	slices.Sort(r.names)
	return Children{Path: p, Names: r.names, Stat: statFrom(r.stat), Watched: true}, nil
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

// Node reads path's stat, data and ACL, and arms a data watch on it if none
// is armed (an exists watch when the data cannot be read), so that a Change
// reports the next modification or deletion.
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
	arm, undo := in.arm(in.dataWatched, abs)
	r, err := call(ctx, func() (res, error) {
		if arm {
			data, stat, _, err := c.GetW(abs)
			return res{data, stat}, err
		}
		data, stat, err := c.Get(abs)
		return res{data, stat}, err
	})
	switch {
	case errors.Is(err, zk.ErrNoAuth):
		n.NoAccess = true
		r, err = call(ctx, func() (res, error) {
			var stat *zk.Stat
			var ok bool
			var err error
			if arm {
				ok, stat, _, err = c.ExistsW(abs)
			} else {
				ok, stat, err = c.Exists(abs)
			}
			if err == nil && !ok {
				err = zk.ErrNoNode
			}
			return res{nil, stat}, err
		})
		if err != nil {
			if arm {
				undo()
			}
			return Node{}, wrapErr("stat", p, err)
		}
	case err != nil:
		if arm {
			undo()
		}
		return Node{}, wrapErr("read", p, err)
	}
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
