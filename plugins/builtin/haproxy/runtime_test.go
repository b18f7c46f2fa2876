package haproxy

import (
	"strings"
	"testing"
)

const stateSample = "1\n# be_id be_name srv_id srv_name srv_addr srv_op_state srv_admin_state srv_uweight srv_iweight srv_time_since_last_change srv_check_status srv_check_result srv_check_health srv_check_state srv_agent_state bk_f_forced_id srv_f_forced_id srv_fqdn srv_port srvrecord srv_use_ssl srv_check_port srv_check_addr srv_agent_addr srv_agent_port\n3 be 1 n1 127.0.0.1 2 8 10 10 0 1 0 2 6 0 0 0 - 18081 - 0 0 - - 0\n\n"

func TestParseServersState(t *testing.T) {
	ss, err := ParseServersState(stateSample)
	if err != nil {
		t.Fatal(err)
	}
	if len(ss) != 1 || ss[0].Name != "n1" || ss[0].Addr != "127.0.0.1:18081" || ss[0].Admin != AdminForcedDrain || ss[0].Ready() {
		t.Fatalf("%+v", ss)
	}
	if _, err := ParseServersState("Can't find backend.\n"); err == nil || !strings.Contains(err.Error(), "Can't find backend.") {
		t.Fatalf("a refusal must be an error with HAProxy's words: %v", err)
	}
}

func TestParseStatSessions(t *testing.T) {
	out := "# pxname,svname,qcur,qmax,scur,smax,\nweb,FRONTEND,,,1,2,\napp,n1,0,0,3,4,\napp,BACKEND,0,0,3,4,\nother,n1,0,0,9,9,\n"
	got, err := ParseStatSessions(out, "app")
	if err != nil || len(got) != 1 || got["n1"] != 3 {
		t.Fatalf("%v %v", got, err)
	}
}

func TestCheckWordRefusesSeparators(t *testing.T) {
	for _, w := range []string{"be;del server be/x", "a\nb", "a b", "", "a#b"} {
		if checkWord(w) == nil {
			t.Errorf("%q was accepted", w)
		}
	}
	for _, w := range []string{"app/grove-0123abcd-4f1e", "127.0.0.1:8080", "[fd00::1]:80"} {
		if err := checkWord(w); err != nil {
			t.Errorf("%q: %v", w, err)
		}
	}
}

// FuzzParseServersState: whatever HAProxy (or something else on the
// socket) answers, the parser returns servers or an error, never panics,
// and every server it returns has a name and an address.
func FuzzParseServersState(f *testing.F) {
	f.Add(stateSample)
	f.Add("1\n# srv_name srv_addr srv_port srv_op_state srv_admin_state\nx 1.2.3.4 80 2 0\n")
	f.Add("Can't find backend.\n")
	f.Fuzz(func(t *testing.T, s string) {
		ss, err := ParseServersState(s)
		if err != nil {
			return
		}
		for _, sv := range ss {
			if sv.Name == "" || sv.Addr == "" {
				t.Fatalf("server without name or address from %q: %+v", s, sv)
			}
		}
	})
}

// FuzzParseStatSessions: the stats parser never panics and reports only
// servers of the backend asked for.
func FuzzParseStatSessions(f *testing.F) {
	f.Add("# pxname,svname,qcur,qmax,scur\napp,n1,0,0,3\n", "app")
	f.Add("# pxname,svname\n", "app")
	f.Fuzz(func(t *testing.T, s, backend string) {
		got, err := ParseStatSessions(s, backend)
		if err != nil {
			return
		}
		for name := range got {
			if name == "BACKEND" || name == "FRONTEND" {
				t.Fatalf("%s reported as a server", name)
			}
		}
	})
}

// FuzzCheckWord: a word that passes holds none of the runtime API's
// separators, so no second command can ride along.
func FuzzCheckWord(f *testing.F) {
	f.Add("app/n1")
	f.Add("x;y")
	f.Fuzz(func(t *testing.T, w string) {
		if checkWord(w) == nil && strings.ContainsAny(w, "; \t\n\r\\#'\"") {
			t.Fatalf("%q passed", w)
		}
	})
}
