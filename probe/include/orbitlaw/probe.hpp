#pragma once
// Public interface of orbitlaw_probe.
namespace orbitlaw::probe {}
