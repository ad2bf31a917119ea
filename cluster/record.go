package cluster

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"

	"github.com/zkherd/zkherd/ensemble"
	"github.com/zkherd/zkherd/internal/exit"
)

// A Record describes a running `zkherd cluster up` to other zkherd
// processes of the same user: its members (whose ports are random), where
// its control endpoint listens and the token it wants. One file per
// running ensemble, readable by its user only, removed on stop.
type Record struct {
	PID     int              `json:"pid"`
	Members []RecordedMember `json:"members"`
	// Control is the loopback address of the control endpoint (Serve);
	// Token authenticates requests to it.
	Control string `json:"control"`
	Token   string `json:"token"`
	// TLS names the certificate files of a TLS-only ensemble.
	TLS  *ensemble.TLSFiles `json:"tls,omitempty"`
	path string
}

// RecordedMember is one member of a recorded ensemble.
type RecordedMember struct {
	ID         int    `json:"id"`
	ClientAddr string `json:"client_addr"`
	AdminURL   string `json:"admin_url"`
}

// ErrNoCluster means no running `cluster up` of this user matches.
var ErrNoCluster = errors.New("cluster: no running \"zkherd cluster up\" found")

// RecordDir is where records live: per user, under the temp directory.
func RecordDir() string {
	return filepath.Join(os.TempDir(), fmt.Sprintf("zkherd-%d", os.Getuid()), "clusters")
}

// NewToken returns a random token for a control endpoint.
func NewToken() string {
	b := make([]byte, 16)
	rand.Read(b)
	return hex.EncodeToString(b)
}

// WriteRecord saves the record of ens, run by this process; the returned
// func removes it.
func WriteRecord(ens *ensemble.Ensemble, control, token string) (remove func(), err error) {
	rec := Record{PID: os.Getpid(), Control: control, Token: token, TLS: ens.TLS()}
	for _, m := range ens.Members() {
		rec.Members = append(rec.Members, RecordedMember{ID: m.ID, ClientAddr: m.ClientAddr, AdminURL: m.AdminURL})
	}
	dir := RecordDir()
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return func() {}, fmt.Errorf("cluster: %w", err)
	}
	path := filepath.Join(dir, fmt.Sprintf("%d.json", rec.PID))
	data, err := json.Marshal(rec)
	if err != nil {
		return func() {}, fmt.Errorf("cluster: %w", err)
	}
	if err := os.WriteFile(path, data, 0o600); err != nil {
		return func() {}, fmt.Errorf("cluster: %w", err)
	}
	return func() { os.Remove(path) }, nil
}

// Records returns the records of this user's running `cluster up`s;
// records left by processes that died are ignored.
func Records() []Record {
	files, _ := filepath.Glob(filepath.Join(RecordDir(), "*.json"))
	var recs []Record
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		var rec Record
		if json.Unmarshal(data, &rec) != nil || !processAlive(rec.PID) {
			continue
		}
		rec.path = f
		recs = append(recs, rec)
	}
	return recs
}

// Find returns the running `cluster up` that has every one of servers
// (client addresses), or, with no servers given, the only one running.
func Find(servers []string) (Record, error) {
	recs := Records()
	if len(servers) == 0 {
		switch len(recs) {
		case 0:
			return Record{}, fmt.Errorf("%w (start one with: zkherd cluster up)", ErrNoCluster)
		case 1:
			return recs[0], nil
		}
		var names []string
		for _, r := range recs {
			names = append(names, r.ConnectString())
		}
		return Record{}, exit.Input("cluster: %d \"zkherd cluster up\" are running (%s): pick one with {server}", len(recs), strings.Join(names, "; "))
	}
	for _, r := range recs {
		if slices.ContainsFunc(servers, func(s string) bool { _, ok := r.Member(s); return !ok }) {
			continue
		}
		return r, nil
	}
	return Record{}, fmt.Errorf("%w with the members %s (see the connect string it printed)", ErrNoCluster, strings.Join(servers, ","))
}

// Member finds a member by client address.
func (r Record) Member(addr string) (RecordedMember, bool) {
	for _, m := range r.Members {
		if m.ClientAddr == addr {
			return m, true
		}
	}
	return RecordedMember{}, false
}

// ConnectString lists the members' client addresses.
func (r Record) ConnectString() string {
	addrs := make([]string, len(r.Members))
	for i, m := range r.Members {
		addrs[i] = m.ClientAddr
	}
	return strings.Join(addrs, ",")
}

// RecordedAdminURL finds the AdminServer of a member started by a running
// `cluster up` of this user.
func RecordedAdminURL(clientAddr string) (string, bool) {
	for _, r := range Records() {
		if m, ok := r.Member(clientAddr); ok && m.AdminURL != "" {
			return m.AdminURL, true
		}
	}
	return "", false
}

func processAlive(pid int) bool {
	if pid <= 0 {
		return false
	}
	return syscall.Kill(pid, 0) == nil
}

// RemoveStaleRecords removes the records of "cluster up" processes that
// died without removing their own (SIGKILL, a crash).
func RemoveStaleRecords() {
	files, _ := filepath.Glob(filepath.Join(RecordDir(), "*.json"))
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		var rec Record
		if json.Unmarshal(data, &rec) == nil && rec.PID > 0 && !processAlive(rec.PID) {
			os.Remove(f)
		}
	}
}
