// Smoke tests proving each third-party dependency is really linked and computes correctly.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <H5Cpp.h>
#include <boost/numeric/odeint.hpp>
#include <cmath>
#include <filesystem>
#include <vector>

TEST(Dependencies, LibTorchTensorOpAndAutograd) {
  torch::manual_seed(0);
  auto x = torch::tensor({1.0, 2.0, 3.0}, torch::dtype(torch::kFloat64).requires_grad(true));
  auto y = (x * x * x).sum();  // d/dx sum(x^3) = 3x^2
  y.backward();
  auto expected = torch::tensor({3.0, 12.0, 27.0}, torch::kFloat64);
  EXPECT_TRUE(torch::allclose(x.grad(), expected));
  auto a = torch::randn({4, 5}, torch::kFloat64);
  auto b = torch::randn({5, 3}, torch::kFloat64);
  auto c = torch::matmul(a, b);
  double naive = 0;
  for (int k = 0; k < 5; ++k) naive += a[1][k].item<double>() * b[k][2].item<double>();
  EXPECT_NEAR(c[1][2].item<double>(), naive, 1e-12);
}

TEST(Dependencies, Hdf5WriteReadRoundTrip) {
  auto path = (std::filesystem::temp_directory_path() / "orbitlaw_dep_test.h5").string();
  std::vector<double> data = {1.5, -2.25, 3.0, 1e-300, 6.02e23};
  {
    H5::H5File file(path, H5F_ACC_TRUNC);
    hsize_t dims[1] = {data.size()};
    H5::DataSpace space(1, dims);
    auto ds = file.createDataSet("values", H5::PredType::NATIVE_DOUBLE, space);
    ds.write(data.data(), H5::PredType::NATIVE_DOUBLE);
  }
  std::vector<double> back(data.size());
  {
    H5::H5File file(path, H5F_ACC_RDONLY);
    file.openDataSet("values").read(back.data(), H5::PredType::NATIVE_DOUBLE);
  }
  EXPECT_EQ(back, data);
  std::filesystem::remove(path);
}

TEST(Dependencies, OdeintHarmonicOscillatorMatchesAnalyticSolution) {
  // x'' = -w^2 x, x(0) = 1, v(0) = 0  =>  x(t) = cos(w t).
  using State = std::vector<double>;
  const double w = 2.0;
  State s = {1.0, 0.0};
  auto rhs = [w](const State& q, State& dq, double) {
    dq[0] = q[1];
    dq[1] = -w * w * q[0];
  };
  namespace odeint = boost::numeric::odeint;
  auto stepper = odeint::make_controlled(1e-12, 1e-12, odeint::runge_kutta_dopri5<State>());
  const double t_end = 10.0;
  odeint::integrate_adaptive(stepper, rhs, s, 0.0, t_end, 1e-3);
  EXPECT_NEAR(s[0], std::cos(w * t_end), 1e-9);
  EXPECT_NEAR(s[1], -w * std::sin(w * t_end), 1e-9);
}
