package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"

	"github.com/zkherd/zkherd/ensemble"
)

// A record of a running "zkherd cluster up", so that "cluster status" can
// find the members' AdminServers (their ports are random) given only the
// client addresses. One file per running ensemble, removed on stop.

type clusterRecord struct {
	PID     int              `json:"pid"`
	Members []recordedMember `json:"members"`
}

type recordedMember struct {
	ClientAddr string `json:"client_addr"`
	AdminURL   string `json:"admin_url"`
}

func clusterRecordDir() string {
	return filepath.Join(os.TempDir(), fmt.Sprintf("zkherd-%d", os.Getuid()), "clusters")
}

// writeClusterRecord saves the members; the returned func removes the file.
func writeClusterRecord(ens *ensemble.Ensemble) (remove func(), err error) {
	rec := clusterRecord{PID: os.Getpid()}
	for _, m := range ens.Members() {
		rec.Members = append(rec.Members, recordedMember{ClientAddr: m.ClientAddr, AdminURL: m.AdminURL})
	}
	dir := clusterRecordDir()
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return func() {}, err
	}
	path := filepath.Join(dir, fmt.Sprintf("%d.json", rec.PID))
	data, err := json.Marshal(rec)
	if err != nil {
		return func() {}, err
	}
	if err := os.WriteFile(path, data, 0o600); err != nil {
		return func() {}, err
	}
	return func() { os.Remove(path) }, nil
}

// recordedAdminURL finds the AdminServer of a member started by a live
// "cluster up" of this user.
func recordedAdminURL(clientAddr string) (string, bool) {
	files, _ := filepath.Glob(filepath.Join(clusterRecordDir(), "*.json"))
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		var rec clusterRecord
		if json.Unmarshal(data, &rec) != nil || !processAlive(rec.PID) {
			continue
		}
		for _, m := range rec.Members {
			if m.ClientAddr == clientAddr && m.AdminURL != "" {
				return m.AdminURL, true
			}
		}
	}
	return "", false
}

func processAlive(pid int) bool { return ensemble.ProcessAlive(pid) }

// removeStaleClusterRecords removes the records of "cluster up" processes
// that died without removing their own.
func removeStaleClusterRecords() {
	files, _ := filepath.Glob(filepath.Join(clusterRecordDir(), "*.json"))
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		var rec clusterRecord
		if json.Unmarshal(data, &rec) == nil && rec.PID > 0 && !processAlive(rec.PID) {
			os.Remove(f)
		}
	}
}
