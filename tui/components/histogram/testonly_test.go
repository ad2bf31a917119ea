package histogram

import (
	"strings"

	"github.com/zkherd/zkherd/tui/common"
	"github.com/zkherd/zkherd/tui/loadview"
)

// Helpers only the tests use, kept out of the binary.

// Render draws buckets as at most height rows of "≤ 2.05ms ████▌ 1,234",
// exactly width cells each. Empty buckets between the first and the last are
// drawn, so gaps show; when there are more buckets than rows, neighbours
// are merged.
func Render(buckets []loadview.Bucket, width, height int) []string {
	if height <= 0 || width <= 0 {
		return nil
	}
	bs := fill(buckets)
	if len(bs) == 0 {
		return []string{common.Fit("no samples yet", width)}
	}
	for len(bs) > height {
		bs = halve(bs)
	}
	var top int64
	for _, b := range bs {
		top = max(top, b.Count)
	}
	const labelW, countW = 8, 8
	barW := width - labelW - countW - 2
	rows := make([]string, 0, len(bs))
	for _, b := range bs {
		var line strings.Builder
		line.WriteString(common.FitRight("≤"+common.Duration(b.UpTo), labelW))
		line.WriteByte(' ')
		line.WriteString(bar(b.Count, top, barW))
		line.WriteByte(' ')
		line.WriteString(common.FitRight(common.Count(b.Count), countW))
		rows = append(rows, common.Fit(line.String(), width))
	}
	return rows
}

// fill adds the empty power-of-two buckets missing between the first and
// last bucket.
func fill(buckets []loadview.Bucket) []loadview.Bucket {
	if len(buckets) == 0 {
		return nil
	}
	out := make([]loadview.Bucket, 0, len(buckets))
	for i, b := range buckets {
		if i > 0 {
			prev := out[len(out)-1].UpTo
			for next := prev * 2; next < b.UpTo && next > prev && len(out) < 64; next *= 2 {
				out = append(out, loadview.Bucket{UpTo: next})
				prev = next
			}
		}
		out = append(out, b)
	}
	return out
}

// halve merges neighbouring buckets pairwise.
func halve(bs []loadview.Bucket) []loadview.Bucket {
	out := make([]loadview.Bucket, 0, (len(bs)+1)/2)
	for i := 0; i < len(bs); i += 2 {
		b := bs[i]
		if i+1 < len(bs) {
			b.UpTo = bs[i+1].UpTo
			b.Count += bs[i+1].Count
		}
		out = append(out, b)
	}
	return out
}
