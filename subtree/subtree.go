// Package subtree copies a znode subtree to a JSON document and back:
// `zkherd export` and `zkherd import`. The document lists every node
// (parents first) with its path, its data (UTF-8 text as is, anything else
// in base64), the essentials of its stat and, optionally, its ACL, as
// zk-shell users expect of a subtree dump.
package subtree

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"path"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/go-zookeeper/zk"
	"github.com/zkherd/zkherd/internal/znode"
)

// Format names the document layout; Import refuses others.
const Format = "zkherd-export/1"

// DefaultMaxNodes bounds an export: past it Export fails rather than
// hold an ensemble's whole tree in memory.
const DefaultMaxNodes = 1_000_000

// Encodings of Node.Data.
const (
	EncodingUTF8   = "utf-8"
	EncodingBase64 = "base64"
)

var (
	// ErrExists is returned (wrapped) by Import when target nodes exist and
	// Overwrite is off; nothing was written.
	ErrExists = errors.New("subtree: nodes exist already")
	// ErrLockedOut is returned (wrapped) by Import when the ACLs it would
	// set keep it from creating a node's children; nothing was written.
	ErrLockedOut = errors.New("subtree: the import would lock itself out")
	// ErrBadDocument means the document is not an export.
	ErrBadDocument = errors.New("subtree: not a zkherd export")
	// ErrTooLarge means the subtree has more than MaxNodes nodes.
	ErrTooLarge = errors.New("subtree: too many nodes")
)

// Document is an exported subtree.
type Document struct {
	Format string `json:"format"`
	// Root is the exported path; every node's Path is Root or below it.
	Root  string `json:"root"`
	Nodes []Node `json:"nodes"`
}

// Node is one znode.
type Node struct {
	Path     string `json:"path"`
	Data     string `json:"data"`
	Encoding string `json:"encoding"`
	Stat     Stat   `json:"stat"`
	ACL      []ACL  `json:"acl,omitempty"`
}

// Stat is what an export keeps of a znode's stat.
type Stat struct {
	Ctime          time.Time `json:"ctime"`
	Mtime          time.Time `json:"mtime"`
	Version        int32     `json:"version"`
	Cversion       int32     `json:"cversion"`
	Aversion       int32     `json:"aversion"`
	EphemeralOwner string    `json:"ephemeral_owner,omitempty"` // session id, hex; empty for persistent nodes
	NumChildren    int32     `json:"num_children"`
	DataLength     int32     `json:"data_length"`
}

// ACL is one entry of a node's ACL; Perms is "cdrwa" or a subset.
type ACL struct {
	Scheme string `json:"scheme"`
	ID     string `json:"id"`
	Perms  string `json:"perms"`
}

// ExportOptions configure Export.
type ExportOptions struct {
	// ACL includes each node's ACL (one more request per node).
	ACL bool
	// MaxNodes defaults to DefaultMaxNodes.
	MaxNodes int
}

// Export reads the subtree at root, parents before children and siblings
// in name order. Nodes deleted during the walk are left out.
func Export(ctx context.Context, conn *zk.Conn, root string, opts ExportOptions) (*Document, error) {
	if err := checkPath(root); err != nil {
		return nil, err
	}
	limit := opts.MaxNodes
	if limit <= 0 {
		limit = DefaultMaxNodes
	}
	doc := &Document{Format: Format, Root: root}
	stack := []string{root}
	for len(stack) > 0 {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		p := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		data, st, err := conn.Get(p)
		if errors.Is(err, zk.ErrNoNode) && p != root {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("subtree: read %s: %w", p, err)
		}
		n := Node{Path: p, Stat: statOf(st)}
		if utf8.Valid(data) {
			n.Data, n.Encoding = string(data), EncodingUTF8
		} else {
			n.Data, n.Encoding = base64.StdEncoding.EncodeToString(data), EncodingBase64
		}
		if opts.ACL {
			acl, _, err := conn.GetACL(p)
			if err != nil && !errors.Is(err, zk.ErrNoNode) {
				return nil, fmt.Errorf("subtree: ACL of %s: %w", p, err)
			}
			for _, a := range acl {
				n.ACL = append(n.ACL, ACL{Scheme: a.Scheme, ID: a.ID, Perms: permString(a.Perms)})
			}
		}
		if len(doc.Nodes) >= limit {
			return nil, fmt.Errorf("%w: %s has more than %d nodes; export a smaller subtree", ErrTooLarge, root, limit)
		}
		doc.Nodes = append(doc.Nodes, n)
		if st.NumChildren == 0 {
			continue
		}
		children, _, err := conn.Children(p)
		if errors.Is(err, zk.ErrNoNode) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("subtree: list %s: %w", p, err)
		}
		slices.Sort(children)
		for i := len(children) - 1; i >= 0; i-- { // reversed: the stack pops them in order
			stack = append(stack, path.Join(p, children[i]))
		}
	}
	return doc, nil
}

func statOf(st *zk.Stat) Stat {
	s := Stat{
		Ctime:       time.UnixMilli(st.Ctime).UTC(),
		Mtime:       time.UnixMilli(st.Mtime).UTC(),
		Version:     st.Version,
		Cversion:    st.Cversion,
		Aversion:    st.Aversion,
		NumChildren: st.NumChildren,
		DataLength:  st.DataLength,
	}
	if st.EphemeralOwner != 0 {
		s.EphemeralOwner = fmt.Sprintf("0x%x", st.EphemeralOwner)
	}
	return s
}

var permLetters = []struct {
	bit    int32
	letter byte
}{{zk.PermCreate, 'c'}, {zk.PermDelete, 'd'}, {zk.PermRead, 'r'}, {zk.PermWrite, 'w'}, {zk.PermAdmin, 'a'}}

func permString(p int32) string {
	var b []byte
	for _, l := range permLetters {
		if p&l.bit != 0 {
			b = append(b, l.letter)
		}
	}
	return string(b)
}

func parsePerms(s string) (int32, error) {
	var p int32
	for i := range len(s) {
		j := slices.IndexFunc(permLetters, func(l struct {
			bit    int32
			letter byte
		}) bool {
			return l.letter == s[i]
		})
		if j < 0 {
			return 0, fmt.Errorf("permission %q: use the letters cdrwa", s)
		}
		p |= permLetters[j].bit
	}
	return p, nil
}

func checkPath(p string) error {
	if !strings.HasPrefix(p, "/") || (p != "/" && strings.HasSuffix(p, "/")) || strings.Contains(p, "//") {
		return fmt.Errorf("subtree: path %q: give an absolute path such as /app/config, without a trailing /", p)
	}
	return nil
}

// ImportOptions configure Import.
type ImportOptions struct {
	// Into is the namespace the document's root becomes (created, with
	// its parents, if missing). It must not be / or under /zookeeper.
	Into string
	// Overwrite replaces the data of nodes that exist; without it Import
	// writes nothing when any target node exists.
	Overwrite bool
	// ACL gives created nodes the document's ACLs; without it they get
	// world:anyone:cdrwa, as zkCli's create does.
	ACL bool
	// Identities are the ids the importing session holds beyond
	// world:anyone (a digest id, as zk.DigestACL makes it): with ACL, an
	// import whose own ACLs would keep it from creating a node's children
	// is refused before it writes anything.
	Identities []zk.ACL
}

// Result counts what Import did; its JSON form is part of what
// `zkherd import -o json` prints.
type Result struct {
	Created int `json:"created"`
	Updated int `json:"updated"`
	// Total is how many nodes the document has: an import that was
	// interrupted wrote Created+Updated of them.
	Total int `json:"total"`
	// CreatedInto says Into did not exist before the import: undoing it
	// is removing Into.
	CreatedInto bool `json:"created_into"`
}

// Import writes doc below opts.Into: the node doc.Root becomes Into, and
// every other node keeps its path relative to doc.Root. Every node is
// created persistent (an ephemeral node cannot outlive the import's
// session), with its data; sequential names are kept as they are. It
// checks every target first, so a refused import writes nothing.
func Import(ctx context.Context, conn *zk.Conn, doc *Document, opts ImportOptions) (Result, error) {
	var res Result
	if doc.Format != Format {
		return res, fmt.Errorf("%w: format %q, want %q", ErrBadDocument, doc.Format, Format)
	}
	if err := checkPath(opts.Into); err != nil {
		return res, err
	}
	if opts.Into == "/" || opts.Into == "/zookeeper" || strings.HasPrefix(opts.Into, "/zookeeper/") {
		return res, fmt.Errorf("subtree: import into %s: choose a namespace of its own, such as /test/import", opts.Into)
	}
	type target struct {
		path   string
		data   []byte
		acl    []zk.ACL
		exists bool
	}
	targets := make([]target, 0, len(doc.Nodes))
	var existing []string
	for _, n := range doc.Nodes {
		var rel string
		switch {
		case n.Path == doc.Root:
		case doc.Root == "/" && strings.HasPrefix(n.Path, "/"):
			rel = n.Path
		case strings.HasPrefix(n.Path, doc.Root+"/"):
			rel = n.Path[len(doc.Root):]
		default:
			return res, fmt.Errorf("%w: node %s is not under the root %s", ErrBadDocument, n.Path, doc.Root)
		}
		t := target{path: opts.Into + rel}
		var err error
		switch n.Encoding {
		case EncodingUTF8, "":
			t.data = []byte(n.Data)
		case EncodingBase64:
			if t.data, err = base64.StdEncoding.DecodeString(n.Data); err != nil {
				return res, fmt.Errorf("%w: data of %s: %v", ErrBadDocument, n.Path, err)
			}
		default:
			return res, fmt.Errorf("%w: node %s: unknown encoding %q", ErrBadDocument, n.Path, n.Encoding)
		}
		t.acl = zk.WorldACL(zk.PermAll)
		if opts.ACL && len(n.ACL) > 0 {
			t.acl = nil
			for _, a := range n.ACL {
				p, err := parsePerms(a.Perms)
				if err != nil {
					return res, fmt.Errorf("%w: ACL of %s: %v", ErrBadDocument, n.Path, err)
				}
				t.acl = append(t.acl, zk.ACL{Perms: p, Scheme: a.Scheme, ID: a.ID})
			}
		}
		if err := ctx.Err(); err != nil {
			return res, err
		}
		ok, _, err := conn.Exists(t.path)
		if err != nil {
			return res, fmt.Errorf("subtree: check %s: %w", t.path, err)
		}
		t.exists = ok
		if ok {
			existing = append(existing, t.path)
		}
		targets = append(targets, t)
	}
	if len(existing) > 0 && !opts.Overwrite {
		return res, fmt.Errorf("%w: %d of the %d nodes exist under %s (first: %s); nothing was written", ErrExists, len(existing), len(targets), opts.Into, existing[0])
	}
	res.Total = len(targets)
	res.CreatedInto = len(targets) > 0 && !targets[0].exists
	if opts.ACL {
		children := map[string]int{}
		for _, t := range targets {
			children[path.Dir(t.path)]++
		}
		for _, t := range targets {
			if n := children[t.path]; n > 0 && !t.exists && !grants(t.acl, opts.Identities, zk.PermCreate) {
				return res, fmt.Errorf("%w: the ACL the document gives %s (%s) would not let this session create its %d child node(s); nothing was written",
					ErrLockedOut, t.path, aclString(t.acl), n)
			}
		}
	}
	if err := createParents(conn, opts.Into); err != nil {
		return res, err
	}
	for _, t := range targets {
		if err := ctx.Err(); err != nil {
			return res, err
		}
		if !t.exists {
			_, err := conn.Create(t.path, t.data, 0, t.acl)
			if err == nil {
				res.Created++
				continue
			}
			if !errors.Is(err, zk.ErrNodeExists) || !opts.Overwrite {
				return res, fmt.Errorf("subtree: create %s: %w", t.path, err)
			}
		}
		if _, err := conn.Set(t.path, t.data, -1); err != nil {
			return res, fmt.Errorf("subtree: set %s: %w", t.path, err)
		}
		res.Updated++
	}
	return res, nil
}

// grants reports whether acl gives perm to a session holding ids (and
// world:anyone). Only what it can tell counts against it: an entry of
// another scheme (ip, sasl, x509) is taken as granting.
func grants(acl []zk.ACL, ids []zk.ACL, perm int32) bool {
	for _, a := range acl {
		if a.Perms&perm == 0 {
			continue
		}
		switch a.Scheme {
		case "world":
			if a.ID == "anyone" {
				return true
			}
		case "auth":
			if len(ids) > 0 {
				return true // the creator's own ids
			}
		case "digest":
			for _, id := range ids {
				if id.Scheme == "digest" && id.ID == a.ID {
					return true
				}
			}
		default:
			return true
		}
	}
	return false
}

// aclString is an ACL as zkCli writes it: scheme:id:perms, comma-separated.
func aclString(acl []zk.ACL) string {
	parts := make([]string, 0, len(acl))
	for _, a := range acl {
		parts = append(parts, a.Scheme+":"+a.ID+":"+permString(a.Perms))
	}
	return strings.Join(parts, ",")
}

// createParents creates the missing ancestors of p, empty and persistent.
func createParents(conn *zk.Conn, p string) error {
	if err := znode.CreateParents(conn, p, zk.WorldACL(zk.PermAll)); err != nil {
		return fmt.Errorf("subtree: %w", err)
	}
	return nil
}
