package mcpserver

import (
	"reflect"
	"testing"
	"time"

	"github.com/parley-mcp/parley/mcp"
	"github.com/parley-mcp/parley/server"
)

// TestOptionsCoverTheLowLevelServer holds that Options is the one struct a
// user fills: every option of the low-level server has a field of the same
// name and type here, and lowLevel carries each one over.
func TestOptionsCoverTheLowLevelServer(t *testing.T) {
	low := reflect.TypeFor[server.Options]()
	high := reflect.TypeFor[Options]()
	var o Options
	ov := reflect.ValueOf(&o).Elem()
	for i := range low.NumField() {
		f := low.Field(i)
		hf, ok := high.FieldByName(f.Name)
		if !ok || hf.Type != f.Type {
			t.Errorf("mcpserver.Options has no field %s %s for server.Options.%s", f.Name, f.Type, f.Name)
			continue
		}
		// A non-zero value here must reach the low-level options.
		v := ov.FieldByIndex(hf.Index)
		v.Set(nonZero(t, f.Type))
		got := reflect.ValueOf(o.lowLevel()).Elem().FieldByName(f.Name)
		if !reflect.DeepEqual(got.Interface(), v.Interface()) {
			t.Errorf("Options.%s = %v did not reach the low-level server (got %v)", f.Name, v, got)
		}
	}
}

func nonZero(t *testing.T, typ reflect.Type) reflect.Value {
	switch typ {
	case reflect.TypeFor[time.Duration]():
		return reflect.ValueOf(3 * time.Second)
	case reflect.TypeFor[mcp.CacheScope]():
		return reflect.ValueOf(mcp.CacheScopePublic)
	}
	switch typ.Kind() {
	case reflect.String:
		return reflect.ValueOf("x").Convert(typ)
	case reflect.Int:
		return reflect.ValueOf(7).Convert(typ)
	case reflect.Slice:
		return reflect.MakeSlice(typ, 1, 1)
	case reflect.Pointer:
		return reflect.New(typ.Elem())
	}
	t.Fatalf("no non-zero value for %s", typ)
	return reflect.Value{}
}

// TestOptionsDeprecatedServerField: the deprecated Server field still
// configures what Options leaves zero, and Options wins where both say.
func TestOptionsDeprecatedServerField(t *testing.T) {
	o := Options{
		ListTTL: time.Minute,
		Server:  &server.Options{ListTTL: time.Hour, ListenBuffer: 5, Instructions: "low"},
	}
	low := o.lowLevel()
	if low.ListTTL != time.Minute || low.ListenBuffer != 5 || low.Instructions != "low" {
		t.Errorf("low-level options %+v", low)
	}
}

// TestOptionsReachTheServer: an option set in Options is what the server
// does (here: serve 2026-07-28 only).
func TestOptionsReachTheServer(t *testing.T) {
	s := MustNew(mcp.Implementation{Name: "only-modern", Version: "1"}, &Options{
		SupportedVersions: []mcp.ProtocolVersion{mcp.Version20260728},
	})
	if got := s.LowLevel().SupportedVersions(); len(got) != 1 || got[0] != mcp.Version20260728 || s.LowLevel().ServesLegacy() {
		t.Errorf("supported versions %v, legacy %v", got, s.LowLevel().ServesLegacy())
	}
}
