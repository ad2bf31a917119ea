package oracle

import (
	"bytes"
	"cmp"
	"compress/gzip"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"slices"
	"time"
)

// MergeHistories merges the histories several processes recorded of one
// run into one, as if one process had recorded every operation: each
// history's times are moved onto the first one's clock through their
// Start (wall clock), its clients renumbered after the previous
// histories' (Clients() of each), and its partitions matched by name.
// Only histories recorded on one host share a clock: the caller checks
// that (a wall clock of another host can be off by more than an
// operation lasts).
func MergeHistories(hs []*History) *History {
	if len(hs) == 0 {
		return nil
	}
	base := hs[0]
	out := &History{Model: base.Model, Limit: base.Limit, Start: base.Start}
	index := map[string]int32{}
	var client int32
	for _, h := range hs {
		shift := h.Start.Sub(base.Start).Nanoseconds()
		parts := make([]int32, len(h.Partitions))
		for i, name := range h.Partitions {
			j, ok := index[name]
			if !ok {
				j = int32(len(out.Partitions))
				index[name] = j
				out.Partitions = append(out.Partitions, name)
			}
			parts[i] = j
		}
		for _, op := range h.Ops {
			op.Call += shift
			op.Return += shift
			op.Client += client
			if int(op.Partition) < len(parts) {
				op.Partition = parts[op.Partition]
			}
			out.Ops = append(out.Ops, op)
		}
		client += h.Clients()
		out.Dropped += h.Dropped
	}
	out.Sort()
	return out
}

// Clients is one more than the highest client number of the history's
// operations.
func (h *History) Clients() int32 {
	var n int32
	for _, op := range h.Ops {
		n = max(n, op.Client+1)
	}
	return n
}

// PartitionIndex returns the index of a partition, adding it if new.
func (h *History) PartitionIndex(name string) int32 {
	if i := slices.Index(h.Partitions, name); i >= 0 {
		return int32(i)
	}
	h.Partitions = append(h.Partitions, name)
	return int32(len(h.Partitions) - 1)
}

// Add adds an operation called at call and returned at ret (on the
// history's clock, from Start); Sort orders the operations again after.
func (h *History) Add(kind Kind, part, client int32, call, ret time.Time, out Outcome, value int64) {
	h.Ops = append(h.Ops, Op{Call: call.Sub(h.Start).Nanoseconds(), Return: ret.Sub(h.Start).Nanoseconds(), Value: value,
		Client: client, Partition: part, Kind: kind, Outcome: out})
}

// Sort orders the operations by call, as a History keeps them.
func (h *History) Sort() {
	slices.SortStableFunc(h.Ops, func(a, b Op) int { return cmp.Compare(a.Call, b.Call) })
}

// opSize is an Op's size in EncodeOps's form.
const opSize = 8 + 8 + 8 + 4 + 4 + 1 + 1

// EncodeOps encodes operations compactly (fixed-size little-endian
// records, gzip, base64), to ship a history between processes.
func EncodeOps(ops []Op) (string, error) {
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	rec := make([]byte, opSize)
	for _, op := range ops {
		binary.LittleEndian.PutUint64(rec[0:], uint64(op.Call))
		binary.LittleEndian.PutUint64(rec[8:], uint64(op.Return))
		binary.LittleEndian.PutUint64(rec[16:], uint64(op.Value))
		binary.LittleEndian.PutUint32(rec[24:], uint32(op.Client))
		binary.LittleEndian.PutUint32(rec[28:], uint32(op.Partition))
		rec[32], rec[33] = byte(op.Kind), byte(op.Outcome)
		if _, err := zw.Write(rec); err != nil {
			return "", err
		}
	}
	if err := zw.Close(); err != nil {
		return "", err
	}
	return base64.StdEncoding.EncodeToString(buf.Bytes()), nil
}

// DecodeOps decodes what EncodeOps encoded.
func DecodeOps(s string) ([]Op, error) {
	data, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		return nil, fmt.Errorf("oracle: operations: %w", err)
	}
	zr, err := gzip.NewReader(bytes.NewReader(data))
	if err != nil {
		return nil, fmt.Errorf("oracle: operations: %w", err)
	}
	var ops []Op
	rec := make([]byte, opSize)
	for {
		_, err := io.ReadFull(zr, rec)
		if errors.Is(err, io.EOF) {
			return ops, nil
		}
		if err != nil {
			return nil, fmt.Errorf("oracle: operations: %w", err)
		}
		ops = append(ops, Op{
			Call: int64(binary.LittleEndian.Uint64(rec[0:])), Return: int64(binary.LittleEndian.Uint64(rec[8:])),
			Value: int64(binary.LittleEndian.Uint64(rec[16:])), Client: int32(binary.LittleEndian.Uint32(rec[24:])),
			Partition: int32(binary.LittleEndian.Uint32(rec[28:])), Kind: Kind(rec[32]), Outcome: Outcome(rec[33]),
		})
	}
}
