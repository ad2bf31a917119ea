package cluster

import "testing"

func TestVerdict(t *testing.T) {
	up := func(id int, mode string) MemberStatus { return MemberStatus{ID: id, Up: true, Mode: mode} }
	down := func(id int) MemberStatus { return MemberStatus{ID: id} }
	tests := []struct {
		name    string
		members []MemberStatus
		healthy bool
		problem string
	}{
		{"all up, one leader", []MemberStatus{up(1, "follower"), up(2, "leader"), up(3, "follower")}, true, ""},
		{"one down", []MemberStatus{up(1, "leader"), down(2), up(3, "follower")}, false, "1 of 3 members down (member 2)"},
		{"electing", []MemberStatus{up(1, ModeNotServing), up(2, ModeNotServing), up(3, ModeNotServing)}, false, "no leader elected: the members are electing, or have no quorum"},
		{"one down while electing", []MemberStatus{up(1, ModeNotServing), down(2), up(3, ModeNotServing)}, false, "1 of 3 members down (member 2)"},
		{"none", []MemberStatus{down(1)}, false, "no member answered"},
		{"two leaders", []MemberStatus{up(1, "leader"), up(2, "leader")}, false, "2 members claim to lead: the servers named may be of different ensembles"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st := Status{Members: tt.members}
			for _, m := range tt.members {
				if m.Up {
					st.Up++
				}
				if m.Mode == "leader" || m.Mode == "standalone" {
					st.Leaders++
				}
			}
			healthy, problem := verdict(st)
			if healthy != tt.healthy || problem != tt.problem {
				t.Errorf("verdict = %v, %q; want %v, %q", healthy, problem, tt.healthy, tt.problem)
			}
		})
	}
}
