// The shape of each fixed-width SIMD instruction: SPRAWLING_SIMD_SHAPE(immediate, signature) of a
// simd_opcodes.def row names how it runs, and SPRAWLING_SIMD_LAYOUT_<shape> its internal layout and
// trap column (internal_ops.def); the interpreter has one handler template per shape. Macros only.
#pragma once

#define SPRAWLING_SIMD_SHAPE(imm, sig) SPRAWLING_SIMD_SHAPE_(imm, sig)
#define SPRAWLING_SIMD_SHAPE_(imm, sig) SPRAWLING_SIMD_SHAPE_##imm##_##sig
// Lane operators: v128 in, v128 out (Un Bin Tern), a shift count (Shift), a scalar splat, a
// scalar out of a whole vector (Test: any_true, all_true, bitmask).
#define SPRAWLING_SIMD_SHAPE_None_V_V Un
#define SPRAWLING_SIMD_SHAPE_None_VV_V Bin
#define SPRAWLING_SIMD_SHAPE_None_VVV_V Tern
#define SPRAWLING_SIMD_SHAPE_None_Vi_V Shift
#define SPRAWLING_SIMD_SHAPE_None_i_V Splat32
#define SPRAWLING_SIMD_SHAPE_None_f_V Splat32
#define SPRAWLING_SIMD_SHAPE_None_l_V Splat64
#define SPRAWLING_SIMD_SHAPE_None_d_V Splat64
#define SPRAWLING_SIMD_SHAPE_None_V_i Test
#define SPRAWLING_SIMD_SHAPE_V128_v_V Const
#define SPRAWLING_SIMD_SHAPE_Shuffle_VV_V Shuffle
// Lane access (32: an i32/f32 scalar, 64: i64/f64).
#define SPRAWLING_SIMD_SHAPE_Lane16_V_i Extract32
#define SPRAWLING_SIMD_SHAPE_Lane8_V_i Extract32
#define SPRAWLING_SIMD_SHAPE_Lane4_V_i Extract32
#define SPRAWLING_SIMD_SHAPE_Lane4_V_f Extract32
#define SPRAWLING_SIMD_SHAPE_Lane2_V_l Extract64
#define SPRAWLING_SIMD_SHAPE_Lane2_V_d Extract64
#define SPRAWLING_SIMD_SHAPE_Lane16_Vi_V Replace32
#define SPRAWLING_SIMD_SHAPE_Lane8_Vi_V Replace32
#define SPRAWLING_SIMD_SHAPE_Lane4_Vi_V Replace32
#define SPRAWLING_SIMD_SHAPE_Lane4_Vf_V Replace32
#define SPRAWLING_SIMD_SHAPE_Lane2_Vl_V Replace64
#define SPRAWLING_SIMD_SHAPE_Lane2_Vd_V Replace64
// Memory, with the accessed width in bytes (the bounds check).
#define SPRAWLING_SIMD_SHAPE_MemArg8_i_V Load1
#define SPRAWLING_SIMD_SHAPE_MemArg16_i_V Load2
#define SPRAWLING_SIMD_SHAPE_MemArg32_i_V Load4
#define SPRAWLING_SIMD_SHAPE_MemArg64_i_V Load8
#define SPRAWLING_SIMD_SHAPE_MemArg128_i_V Load16
#define SPRAWLING_SIMD_SHAPE_MemArg128_iV_v Store16
#define SPRAWLING_SIMD_SHAPE_MemArgLane8_iV_V LoadLane1
#define SPRAWLING_SIMD_SHAPE_MemArgLane16_iV_V LoadLane2
#define SPRAWLING_SIMD_SHAPE_MemArgLane32_iV_V LoadLane4
#define SPRAWLING_SIMD_SHAPE_MemArgLane64_iV_V LoadLane8
#define SPRAWLING_SIMD_SHAPE_MemArgLane8_iV_v StoreLane1
#define SPRAWLING_SIMD_SHAPE_MemArgLane16_iV_v StoreLane2
#define SPRAWLING_SIMD_SHAPE_MemArgLane32_iV_v StoreLane4
#define SPRAWLING_SIMD_SHAPE_MemArgLane64_iV_v StoreLane8

// Layout, trap column.
#define SPRAWLING_SIMD_LAYOUT_Un VUnary, NoTrap
#define SPRAWLING_SIMD_LAYOUT_Bin VBinary, NoTrap
#define SPRAWLING_SIMD_LAYOUT_Tern VTernary, NoTrap
#define SPRAWLING_SIMD_LAYOUT_Shift VShift, NoTrap
#define SPRAWLING_SIMD_LAYOUT_Splat32 VSplat, NoTrap
#define SPRAWLING_SIMD_LAYOUT_Splat64 VSplat, NoTrap
#define SPRAWLING_SIMD_LAYOUT_Test VTest, NoTrap
#define SPRAWLING_SIMD_LAYOUT_Const VConst, NoTrap
#define SPRAWLING_SIMD_LAYOUT_Shuffle VShuffle, NoTrap
#define SPRAWLING_SIMD_LAYOUT_Extract32 VExtract, NoTrap
#define SPRAWLING_SIMD_LAYOUT_Extract64 VExtract, NoTrap
#define SPRAWLING_SIMD_LAYOUT_Replace32 VReplace, NoTrap
#define SPRAWLING_SIMD_LAYOUT_Replace64 VReplace, NoTrap
#define SPRAWLING_SIMD_LAYOUT_Load1 VLoad, Traps
#define SPRAWLING_SIMD_LAYOUT_Load2 VLoad, Traps
#define SPRAWLING_SIMD_LAYOUT_Load4 VLoad, Traps
#define SPRAWLING_SIMD_LAYOUT_Load8 VLoad, Traps
#define SPRAWLING_SIMD_LAYOUT_Load16 VLoad, Traps
#define SPRAWLING_SIMD_LAYOUT_Store16 VStore, Traps
#define SPRAWLING_SIMD_LAYOUT_LoadLane1 VLoadLane, Traps
#define SPRAWLING_SIMD_LAYOUT_LoadLane2 VLoadLane, Traps
#define SPRAWLING_SIMD_LAYOUT_LoadLane4 VLoadLane, Traps
#define SPRAWLING_SIMD_LAYOUT_LoadLane8 VLoadLane, Traps
#define SPRAWLING_SIMD_LAYOUT_StoreLane1 VStoreLane, Traps
#define SPRAWLING_SIMD_LAYOUT_StoreLane2 VStoreLane, Traps
#define SPRAWLING_SIMD_LAYOUT_StoreLane4 VStoreLane, Traps
#define SPRAWLING_SIMD_LAYOUT_StoreLane8 VStoreLane, Traps
