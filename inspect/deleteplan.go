package inspect

import (
	"context"
	"crypto/sha1"
	"encoding/base64"
	"errors"
	"fmt"
	"path"
	"strings"

	"github.com/go-zookeeper/zk"

	"github.com/zkherd/zkherd/internal/inert"
)

// DeletePlan is what deleting a node would remove, checked before the user
// is asked: a delete ZooKeeper would refuse is refused here, in words,
// before anything is removed.
type DeletePlan struct {
	Path    string
	Version int32 // the node's version when checked
	// Count is how many nodes the delete removes: the node and everything
	// under it.
	Count int
	// Refused says why this session may not delete it ("" when it may, or
	// when that could not be known: then Unsure says why and the servers
	// decide).
	Refused string
	Unsure  string
}

// PlanDelete checks what deleting p would do: how many nodes it removes,
// and whether this session may (ZooKeeper needs DELETE on the parent of
// every node removed; the node's own ACL does not matter). A node whose
// ACL denies READ can still be deleted when it has no children (its stat
// needs no permission); with children it cannot be emptied, since they
// cannot be listed.
func (in *Inspector) PlanDelete(ctx context.Context, p string) (DeletePlan, error) {
	plan, err := in.planDelete(ctx, p)
	inert.All(&plan) // the reasons quote ACL ids, anyone's text
	return plan, err
}

func (in *Inspector) planDelete(ctx context.Context, p string) (DeletePlan, error) {
	plan := DeletePlan{Path: p}
	if p == "/" || p == "" || in.abs(p) == "/zookeeper" {
		plan.Refused = "ZooKeeper's own nodes cannot be deleted"
		return plan, nil
	}
	c, err := in.conn(ctx)
	if err != nil {
		return plan, err
	}
	abs := in.abs(p)
	type res struct {
		ok   bool
		stat *zk.Stat
	}
	r, err := call(ctx, func() (res, error) {
		ok, stat, err := c.Exists(abs)
		return res{ok, stat}, err
	})
	if err == nil && !r.ok {
		err = zk.ErrNoNode
	}
	if err != nil {
		return plan, wrapErr("check", p, err)
	}
	plan.Version = r.stat.Version
	ids := in.identities()
	parents := []string{path.Dir(abs)}
	if r.stat.NumChildren == 0 {
		plan.Count = 1
	} else {
		levels, n, err := in.tree(ctx, p)
		switch {
		case errors.Is(err, ErrNoAccess):
			plan.Refused = in.advice("it has %s and this session may not list what is under it (an ACL there denies READ; see {auth})",
				plural(int(r.stat.NumChildren), "child", "children"))
			return plan, nil
		case err != nil:
			return plan, err
		}
		plan.Count = n
		// Every node that has children is a parent whose DELETE is needed.
		for i := 1; i < len(levels); i++ {
			seen := map[string]bool{}
			for _, q := range levels[i] {
				if d := path.Dir(q); !seen[d] {
					seen[d] = true
					parents = append(parents, d)
				}
			}
		}
	}
	type aclRes struct {
		dir string
		acl []zk.ACL
		err error
	}
	for _, a := range pipelined(ctx, parents, func(dir string) aclRes {
		acl, _, err := c.GetACL(dir)
		return aclRes{dir, acl, err}
	}) {
		rel, _ := in.rel(a.dir)
		if a.err != nil {
			if plan.Unsure == "" {
				plan.Unsure = fmt.Sprintf("the ACL of %s could not be read (%s): the servers will decide", rel, shortErr(a.err))
			}
			continue
		}
		switch may, known := mayDelete(a.acl, ids); {
		case !known && plan.Unsure == "":
			plan.Unsure = fmt.Sprintf("the ACL of %s (%s) names ids this inspector cannot match: the servers will decide", rel, aclText(a.acl))
		case known && !may:
			what := "it"
			if a.dir != path.Dir(abs) {
				what = "the children of " + rel
			}
			plan.Refused = in.advice("this session may not delete %s: the ACL of %s (%s) grants delete to no id of this session (see {auth})",
				what, rel, aclText(a.acl))
			return plan, nil
		}
	}
	return plan, ctx.Err()
}

// identity is one id a session holds, as ACL entries name it.
type identity struct{ scheme, id string }

// identities are the ids this session authenticates as: world:anyone, and
// the digest of --auth. ZooKeeper derives a digest id as
// user:base64(sha1("user:password")).
func (in *Inspector) identities() []identity {
	ids := []identity{{"world", "anyone"}}
	if a := in.opts.Auth; a != "" {
		user, _, _ := strings.Cut(a, ":")
		sum := sha1.Sum([]byte(a))
		ids = append(ids, identity{"digest", user + ":" + base64.StdEncoding.EncodeToString(sum[:])})
		if user == "super" {
			// A superuser passes every ACL if the server was given its
			// digest (zookeeper.DigestAuthenticationProvider.superDigest),
			// which a client cannot know.
			ids = append(ids, identity{"super", ""})
		}
	}
	return ids
}

// mayDelete reports whether an ACL grants DELETE to one of ids; known is
// false when it grants to none of them but names ids that cannot be
// matched from here (ip, sasl, x509: they depend on the connection), or the
// session may be a superuser.
func mayDelete(acl []zk.ACL, ids []identity) (may, known bool) {
	known = true
	for _, id := range ids {
		if id.scheme == "super" {
			known = false
		}
	}
	for _, a := range acl {
		if a.Perms&zk.PermDelete == 0 {
			continue
		}
		switch a.Scheme {
		case "world", "digest":
			for _, id := range ids {
				if id.scheme == a.Scheme && id.id == a.ID {
					return true, true
				}
			}
		default:
			known = false
		}
	}
	return false, known
}

// aclText writes an ACL as zkCli does: scheme:id:perms, comma separated.
func aclText(acl []zk.ACL) string {
	parts := make([]string, len(acl))
	for i, a := range aclFrom(acl) {
		parts[i] = a.Scheme + ":" + a.ID + ":" + a.Perms
	}
	return strings.Join(parts, ",")
}

func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}

// RolesAt describes in words, one line each, the live contenders of the
// snapshot's locks whose nodes are p or under it: a lock holder, a leader,
// a semaphore lease, and how many waiters would lose their place. Deleting
// a holder's node lets the next waiter in while the holder's client still
// believes it holds: the user must know before confirming.
func (s *Snapshot) RolesAt(p string) []string {
	if s == nil {
		return nil
	}
	under := func(q string) bool { return q == p || p == "/" || strings.HasPrefix(q, p+"/") }
	var out []string
	waiters := 0
	for _, l := range s.Locks {
		if !under(l.Path) && !strings.HasPrefix(p, l.Path+"/") {
			continue
		}
		for _, e := range l.Entries {
			if e.Node == "" || !under(path.Join(l.Path, e.Node)) {
				continue
			}
			if e.Role == RoleWaiter {
				waiters++
				continue
			}
			who := "session " + SessionHex(e.Session)
			switch {
			case e.Session == 0:
				who = "session not known yet"
			case e.Endpoint != "":
				who += " at " + e.Endpoint
			}
			if e.Flags.Has(AnomalyHolderGone) {
				who += ", connected to no member"
			}
			var what string
			switch {
			case e.Kind == "lease":
				what = "a semaphore lease of " + l.Path
			case strings.Contains(l.Layout, "lock or election"):
				// The same nodes for kazoo's Lock and Election, Curator's
				// mutex and LeaderSelector (layoutName).
				what = "the live holder (or leader) of " + l.Path
			case e.Kind == "latch" || e.Kind == "election" || strings.Contains(l.Layout, "election") || strings.Contains(l.Layout, "leader"):
				what = "the leader of " + l.Path
			case e.Role == RoleHolder:
				what = "the live holder of " + l.Path
			default:
				what = "a member of " + l.Path
			}
			node := path.Join(l.Path, e.Node)
			if node == p {
				node = "this node"
			}
			line := fmt.Sprintf("%s is %s (%s)", node, what, who)
			if !e.Flags.Has(AnomalyHolderGone) && e.Role == RoleHolder {
				line += ": its client still acts on it while another takes its place"
			}
			out = append(out, line)
		}
	}
	if waiters > 0 {
		out = append(out, plural(waiters, "waiter loses its place", "waiters lose their place")+" in line")
	}
	return out
}
