package aigateway

import (
	"encoding/json"

	"k8s.io/apimachinery/pkg/runtime"
)

func roundTrip[T runtime.Object](in T, out T) runtime.Object {
	data, err := json.Marshal(in)
	if err != nil {
		panic(err)
	}
	if err := json.Unmarshal(data, out); err != nil {
		panic(err)
	}
	return out
}
