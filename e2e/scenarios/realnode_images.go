// Real-node scenarios of image pulls from the test's registry (seed S12): not found, auth, unreachable,
// plain HTTP.

package scenarios

import (
	"fmt"
	"net"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubecause/kubecause/e2e/framework"
)

// S12: an image tag that the (local) registry does not have.
func realS12NotFound() Scenario {
	return podScenario("S12-NOTFOUND", "image not found in the registry", "real-s12-notfound", "missing-tag", func(s *framework.Stack, p *corev1.Pod) error {
		container(p).Image = s.Registry.Addr + "/kubecause/testapp:no-such-tag"
		return nil
	}, "Failed", "image_not_found", "KubecausePodImagePullFailing")
}

// S12: the registry needs credentials the pod does not have.
func realS12Auth() Scenario {
	return podScenario("S12-AUTH", "registry auth required", "real-s12-auth", "no-pull-secret", func(s *framework.Stack, p *corev1.Pod) error {
		container(p).Image = s.AuthRegistry.Addr + "/kubecause/testapp:e2e"
		return nil
	}, "Failed", "image_auth_failed", "KubecausePodImagePullFailing")
}

// S12: the registry cannot be reached (nothing listens on its port).
func realS12Unreachable() Scenario {
	return podScenario("S12-UNREACHABLE", "registry unreachable", "real-s12-unreachable", "registry-down", func(_ *framework.Stack, p *corev1.Pod) error {
		port, err := framework.FreePort()
		container(p).Image = fmt.Sprintf("127.0.0.1:%d/kubecause/testapp:e2e", port)
		return err
	}, "Failed", "image_registry_unreachable", "KubecausePodImagePullFailing")
}

// S12: the registry speaks plain HTTP and the node's runtime expects HTTPS (no insecure-registry
// setting for it). The open registry is named by another host, localhost:port, whose hosts.toml
// says https, as containerd assumes for any registry off the loopback.
func realS12Insecure() Scenario {
	return podScenario("S12-INSECURE", "plain-HTTP registry, runtime expects HTTPS", "real-s12-insecure", "insecure-registry", func(s *framework.Stack, p *corev1.Pod) error {
		_, port, err := net.SplitHostPort(s.Registry.Addr)
		if err != nil {
			return err
		}
		host := net.JoinHostPort("localhost", port)
		container(p).Image = host + "/kubecause/testapp:e2e"
		return s.Node.ExpectTLSRegistry(host)
	}, "Failed", "image_insecure_registry", "KubecausePodImagePullFailing")
}
