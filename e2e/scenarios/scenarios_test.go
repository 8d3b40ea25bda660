package scenarios

import (
	"regexp"
	"testing"
)

// One Scenario type serves the written suite, the real node and the demo; which expectation a
// scenario carries follows from who writes its Events (none for a state-only one: S3's Service,
// S19's claim, S7's endpoints), and the real node sums Events per namespace.
func TestScenariosCarryTheirKindOfExpectation(t *testing.T) {
	lists := []struct {
		name    string
		written bool
		list    []Scenario
	}{
		{"SeedScenarios", true, SeedScenarios()},
		{"RealScenarios", false, RealScenarios()},
		{"RealNodeScenarios", false, RealNodeScenarios()},
	}
	for _, l := range lists {
		ids, nss := map[string]bool{}, map[string]bool{}
		for _, sc := range l.list {
			switch {
			case sc.ID == "" || sc.Title == "" || sc.Namespace == "" || sc.Play == nil:
				t.Errorf("%s: %q lacks an ID, a title, a namespace or Play", l.name, sc.ID)
			case ids[sc.ID]:
				t.Errorf("%s: two scenarios %s", l.name, sc.ID)
			case !l.written && nss[sc.Namespace]:
				t.Errorf("%s: %s shares namespace %s: its Events could not be summed alone", l.name, sc.ID, sc.Namespace)
			case l.written && len(sc.Expect) > 0:
				t.Errorf("%s: %s is written by the test: it knows its exact occurrences, no component writes its Events", l.name, sc.ID)
			case !l.written && len(sc.Occurrences) > 0:
				t.Errorf("%s: %s is played on the real node: it names the Events a component writes, whose counts the test does not choose", l.name, sc.ID)
			case len(sc.Alerts) == 0 && len(sc.Queries) == 0:
				t.Errorf("%s: %s expects no alert and no query", l.name, sc.ID)
			}
			ids[sc.ID], nss[sc.Namespace] = true, true
		}
	}
}

// One ID style in every list (realnode.go): a seed's ID (S1…S19), a variant after a hyphen
// (S12-AUTH, S18-LOW), or an area's name for a scenario without a seed (SCHED-CPU, QUOTA). IDs
// name subtests (go test -run 'TestRealNode/S12-AUTH'), so one style keeps them guessable.
func TestScenarioIDsHaveOneStyle(t *testing.T) {
	style := regexp.MustCompile(`^(S[0-9]+|[A-Z]+)(-[A-Z]+)?$`)
	for _, list := range [][]Scenario{SeedScenarios(), RealScenarios(), RealNodeScenarios(), IncidentPrelude()} {
		for _, sc := range list {
			if !style.MatchString(sc.ID) {
				t.Errorf("scenario ID %q (%s): want a seed's ID, a variant after a hyphen or an area's name, in capitals", sc.ID, sc.Title)
			}
		}
	}
}
