package subtree_test

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zkherd/zkherd/ensemble/enstest"
	"github.com/zkherd/zkherd/recipes"
	"github.com/zkherd/zkherd/subtree"
)

func TestExportImportRoundTrip(t *testing.T) {
	ens := enstest.Start(t, 1)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	s, err := recipes.NewSession(ctx, ens.Servers())
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	conn := s.Conn()
	binary := []byte{0xff, 0x00, 0x01, 0xfe}
	for _, n := range []struct {
		path string
		data []byte
	}{{"/app", nil}, {"/app/config.json", []byte(`{"a": 1}`)}, {"/app/bin", binary}, {"/app/dir", []byte("d")}, {"/app/dir/leaf", []byte("line one\nline\ttwo")}} {
		if _, err := conn.Create(n.path, n.data, 0, zk.WorldACL(zk.PermAll)); err != nil {
			t.Fatalf("create %s: %v", n.path, err)
		}
	}
	if _, err := conn.Create("/app/dir/eph", []byte("e"), zk.FlagEphemeral, zk.WorldACL(zk.PermAll)); err != nil {
		t.Fatal(err)
	}

	doc, err := subtree.Export(ctx, conn, "/app", subtree.ExportOptions{ACL: true})
	if err != nil {
		t.Fatalf("Export: %v", err)
	}
	var paths []string
	for _, n := range doc.Nodes {
		paths = append(paths, n.Path)
	}
	want := []string{"/app", "/app/bin", "/app/config.json", "/app/dir", "/app/dir/eph", "/app/dir/leaf"}
	if len(paths) != len(want) {
		t.Fatalf("exported %v, want %v", paths, want)
	}
	for i := range want {
		if paths[i] != want[i] {
			t.Fatalf("exported %v, want %v (parents first, siblings in order)", paths, want)
		}
	}
	if got := doc.Nodes[1]; got.Encoding != subtree.EncodingBase64 {
		t.Errorf("binary node encoding = %q, want base64", got.Encoding)
	}
	if got := doc.Nodes[4]; got.Stat.EphemeralOwner == "" {
		t.Errorf("ephemeral node has no ephemeral_owner in its stat")
	}
	if got := doc.Nodes[2]; len(got.ACL) != 1 || got.ACL[0].Perms != "cdrwa" || got.ACL[0].Scheme != "world" {
		t.Errorf("ACL = %+v, want world:anyone:cdrwa", got.ACL)
	}

	// Through JSON, as the CLI writes and reads it.
	b, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	var back subtree.Document
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	res, err := subtree.Import(ctx, conn, &back, subtree.ImportOptions{Into: "/test/ns"})
	if err != nil {
		t.Fatalf("Import: %v", err)
	}
	if res.Created != len(want) {
		t.Errorf("created %d nodes, want %d", res.Created, len(want))
	}
	for _, c := range []struct {
		path string
		data []byte
	}{{"/test/ns/bin", binary}, {"/test/ns/config.json", []byte(`{"a": 1}`)}, {"/test/ns/dir/leaf", []byte("line one\nline\ttwo")}} {
		got, st, err := conn.Get(c.path)
		if err != nil {
			t.Fatalf("get %s: %v", c.path, err)
		}
		if string(got) != string(c.data) {
			t.Errorf("%s = %q, want %q", c.path, got, c.data)
		}
		if st.EphemeralOwner != 0 {
			t.Errorf("%s imported as ephemeral", c.path)
		}
	}
	if _, st, _ := conn.Get("/test/ns/dir/eph"); st == nil || st.EphemeralOwner != 0 {
		t.Errorf("ephemeral node not imported as persistent: %+v", st)
	}

	// A second import refuses and writes nothing; with Overwrite it replaces data.
	if _, err := conn.Set("/test/ns/config.json", []byte("changed"), -1); err != nil {
		t.Fatal(err)
	}
	_, err = subtree.Import(ctx, conn, &back, subtree.ImportOptions{Into: "/test/ns"})
	if !errors.Is(err, subtree.ErrExists) {
		t.Fatalf("second import: err = %v, want ErrExists", err)
	}
	if got, _, _ := conn.Get("/test/ns/config.json"); string(got) != "changed" {
		t.Errorf("refused import wrote %q", got)
	}
	res, err = subtree.Import(ctx, conn, &back, subtree.ImportOptions{Into: "/test/ns", Overwrite: true})
	if err != nil || res.Updated != len(want) {
		t.Fatalf("overwrite import: %+v, %v; want %d updated", res, err, len(want))
	}
	if got, _, _ := conn.Get("/test/ns/config.json"); string(got) != `{"a": 1}` {
		t.Errorf("overwrite left %q", got)
	}
	if _, err := subtree.Import(ctx, conn, &back, subtree.ImportOptions{Into: "/"}); err == nil {
		t.Errorf("import into / accepted")
	}
}
