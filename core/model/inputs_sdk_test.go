package model_test

import (
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/grovehq/grove/core/model"
	"github.com/grovehq/grove/plugins/sdk"
)

// TestSDKInputTypesMatchTheEngines keeps the input and data types plugins
// decode (plugins/sdk) and the ones the engine stores (core/model) on the
// same JSON keys: a key renamed on one side only would make policies read
// nothing where the engine wrote something.
func TestSDKInputTypesMatchTheEngines(t *testing.T) {
	pairs := []struct {
		name        string
		engine, sdk any
	}{
		{"ClusterResizeInputs", model.ClusterResizeInputs{}, sdk.ClusterResizeInputs{}},
		{"ClusterScaleInputs", model.ClusterScaleInputs{}, sdk.ClusterScaleInputs{}},
		{"ClusterDelNodesInputs", model.ClusterDelNodesInputs{}, sdk.ClusterDelNodesInputs{}},
		{"ClusterAddNodesInputs", model.ClusterAddNodesInputs{}, sdk.ClusterAddNodesInputs{}},
		{"DeletionData", model.DeletionData{}, sdk.DeletionData{}},
		{"CreationData", model.CreationData{}, sdk.CreationData{}},
	}
	for _, p := range pairs {
		t.Run(p.name, func(t *testing.T) {
			engine, plugin := jsonKeys(reflect.TypeOf(p.engine)), jsonKeys(reflect.TypeOf(p.sdk))
			if !slices.Equal(engine, plugin) {
				t.Errorf("JSON keys differ:\n core/model:  %v\n plugins/sdk: %v", engine, plugin)
			}
		})
	}
}

func jsonKeys(t reflect.Type) []string {
	var keys []string
	for f := range t.Fields() {
		if !f.IsExported() {
			continue
		}
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		switch name {
		case "-":
			continue
		case "":
			name = f.Name
		}
		keys = append(keys, name)
	}
	slices.Sort(keys)
	return keys
}
