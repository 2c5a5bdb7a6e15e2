/* g16_names_undef.h — forgets the names of g16_names_*.h (see there) */
#undef CV
#undef CVU
#undef G16
#undef JS
#undef ST
#undef ZKP
#undef WTW
#undef CV_ID
#undef CV_NAME
#undef CV_SNARKJS
#undef CV_G1_EQ
#undef CV_G2_EQ
#undef CV_FP_DEC_MAX
#undef CV_FR_DEC_MAX
#undef CV_NTT_MAX_LOG
#undef ANYU
