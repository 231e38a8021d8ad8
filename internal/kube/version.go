package kube

import (
	"encoding/json"
	"errors"
)

func parseVersion(body []byte) (string, error) {
	var info struct {
		GitVersion string `json:"gitVersion"`
	}
	if err := json.Unmarshal(body, &info); err != nil {
		return "", err
	}
	if info.GitVersion == "" {
		return "", errors.New("empty gitVersion")
	}
	return info.GitVersion, nil
}
