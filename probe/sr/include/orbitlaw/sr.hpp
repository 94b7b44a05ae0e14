#pragma once
// Public interface of orbitlaw_sr, the symbolic-regression engine.
namespace orbitlaw::sr {}
