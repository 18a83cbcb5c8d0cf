// A component library for the loader's tests (plugin_test.cpp): a shared
// library that loads but registers no component kind.
int scabenchTestNothing() { return 0; }
