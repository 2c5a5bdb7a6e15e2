/*
 * curve_field_ops_undef_impl.h — the end of a curve template: undefines the
 * includer's macros (CG, CJ, CA, CF, CF_ONE and the public template's
 * CF_CANON, CF_MUL_B3, CB, CG_NAME, CG_SCALAR, CG_NO_MUL_ABSU,
 * CG_WITH_MUL_VT) and those of curve_field_ops_impl.h, so the next
 * instantiation starts clean.
 */
#undef CF_CAT_
#undef CF_CAT
#undef CF_ADD
#undef CF_SUB
#undef CF_DBL
#undef CF_NEG
#undef CF_MUL
#undef CF_SQR
#undef CF_ISZERO
#undef CF_EQ
#undef CF_INV
#undef CF_INV_CT
#undef CG
#undef CJ
#undef CA
#undef CF
#undef CF_ONE
#undef CF_CANON
#undef CF_MUL_B3
#undef CB
#undef CG_NAME
#undef CG_SCALAR
#undef CG_NO_MUL_ABSU
#undef CG_WITH_MUL_VT
