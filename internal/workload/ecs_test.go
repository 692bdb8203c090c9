package workload

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// newServer serves body at /v4/<id>/task on 127.0.0.1 and counts requests.
func newServer(t *testing.T, status int, body string) (uri string, hits *int) {
	t.Helper()
	n := 0
	mux := http.NewServeMux()
	mux.HandleFunc("GET /v4/abc-123/task", func(w http.ResponseWriter, r *http.Request) {
		n++
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		_, _ = w.Write([]byte(body))
	})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewUnstartedServer(mux)
	srv.Listener = ln
	srv.Start()
	t.Cleanup(srv.Close)
	return srv.URL + "/v4/abc-123", &n
}

func TestFetchFargateTask(t *testing.T) {
	body, err := os.ReadFile("testdata/task_fargate.json")
	if err != nil {
		t.Fatal(err)
	}
	uri, hits := newServer(t, http.StatusOK, string(body))
	got, err := ECS(context.Background(), nil, uri)
	if err != nil {
		t.Fatal(err)
	}
	want := []Attr{
		{Key: "ecs_cluster", Value: "default"},
		{Key: "ecs_task_arn", Value: "arn:aws:ecs:us-west-2:111122223333:task/default/e9028f8d5d8e4f258373e7b93ce9a3c3"},
		{Key: "ecs_task_definition", Value: "curltest:3"},
		{Key: "cloud.provider", Value: "aws"},
		{Key: "cloud.platform", Value: "aws_ecs"},
		{Key: "cloud.region", Value: "us-west-2"},
		{Key: "cloud.account.id", Value: "111122223333"},
		{Key: "cloud.availability_zone", Value: "us-west-2a"},
		{Key: "aws.ecs.cluster.arn", Value: "arn:aws:ecs:us-west-2:111122223333:cluster/default"},
		{Key: "aws.ecs.task.arn", Value: "arn:aws:ecs:us-west-2:111122223333:task/default/e9028f8d5d8e4f258373e7b93ce9a3c3"},
		{Key: "aws.ecs.task.id", Value: "e9028f8d5d8e4f258373e7b93ce9a3c3"},
		{Key: "aws.ecs.task.family", Value: "curltest"},
		{Key: "aws.ecs.task.revision", Value: "3"},
		{Key: "aws.ecs.launchtype", Value: "fargate"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("attrs:\n got %v\nwant %v", got, want)
	}
	if *hits != 1 {
		t.Fatalf("requests = %d, want 1", *hits)
	}
}

func TestFetchEC2ClusterName(t *testing.T) {
	uri, _ := newServer(t, http.StatusOK, `{"Cluster":"prod","TaskARN":"arn:aws:ecs:eu-west-1:1:task/prod/x","Family":"api","Revision":"12","LaunchType":"EC2"}`)
	got, err := ECS(context.Background(), http.DefaultClient, uri+"/") // trailing slash tolerated
	if err != nil {
		t.Fatal(err)
	}
	if got[0].Value != "prod" || got[2].Value != "api:12" {
		t.Fatalf("attrs = %v", got)
	}
	// On EC2 the metadata names the cluster only; its ARN is built from
	// the task ARN's partition, region and account.
	for _, want := range []Attr{{"aws.ecs.cluster.arn", "arn:aws:ecs:eu-west-1:1:cluster/prod"}, {"aws.ecs.launchtype", "ec2"}, {"cloud.region", "eu-west-1"}} {
		if !slices.Contains(got, want) {
			t.Errorf("no %v in %v", want, got)
		}
	}
}

func TestFetchErrors(t *testing.T) {
	cases := []struct {
		name, body, wantErr string
		status              int
	}{
		{"status", `{}`, "status 500", http.StatusInternalServerError},
		{"not json", `<html>`, "invalid character", http.StatusOK},
		{"missing fields", `{"Cluster":"c"}`, "TaskARN or Family missing", http.StatusOK},
		{"too large", `{"Cluster":"` + strings.Repeat("x", maxBody) + `"}`, "larger than", http.StatusOK},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			uri, _ := newServer(t, tc.status, tc.body)
			_, err := ECS(context.Background(), nil, uri)
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("err = %v, want it to contain %q", err, tc.wantErr)
			}
		})
	}
	if _, err := ECS(context.Background(), nil, ""); err == nil {
		t.Fatal("empty URI: want an error")
	}
}

func TestFetchUnreachable(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	if _, err := ECS(context.Background(), nil, "http://"+addr+"/v4/x"); err == nil {
		t.Fatal("want an error for a closed port")
	}
}
