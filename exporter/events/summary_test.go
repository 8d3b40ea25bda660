package events

import (
	"testing"

	"k8s.io/apimachinery/pkg/types"
)

func TestKeyOf(t *testing.T) {
	// A UID an apiserver assigned (one in a message of causes' held-back corpus) is its 16 bytes.
	k, ok := keyOf("fca072e7-e58f-4d8e-a0a7-6b8512f7b7d1")
	want := uidKey{0xfc, 0xa0, 0x72, 0xe7, 0xe5, 0x8f, 0x4d, 0x8e, 0xa0, 0xa7, 0x6b, 0x85, 0x12, 0xf7, 0xb7, 0xd1}
	if !ok || k != want {
		t.Fatalf("keyOf(uuid) = %x, %v; want %x", k, ok, want)
	}
	if _, ok := keyOf(""); ok {
		t.Fatal("an empty UID has a key")
	}
	// Anything else is hashed: distinct UIDs keep distinct keys, the same UID the same key.
	seen := map[uidKey]types.UID{}
	for _, u := range []types.UID{"not-a-uuid", "urn:uuid:fca072e7-e58f-4d8e-a0a7-6b8512f7b7d1",
		"fca072e7e58f4d8ea0a76b8512f7b7d1", "fca072e7-e58f-4d8e-a0a7-6b8512f7b7dg", "fca072e7-e58f-4d8e-a0a7-6b8512f7b7d1"} {
		k, ok := keyOf(u)
		if !ok {
			t.Fatalf("keyOf(%q) failed", u)
		}
		if prev, dup := seen[k]; dup {
			t.Fatalf("%q and %q share a key", prev, u)
		}
		seen[k] = u
		if k2, _ := keyOf(u); k2 != k {
			t.Fatalf("keyOf(%q) is not stable", u)
		}
	}
}
