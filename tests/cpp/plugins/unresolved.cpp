// A component library for the loader's tests (plugin_test.cpp): it needs a
// symbol that nothing provides, so loading it fails and says which.
int scabenchTestNowhere();
static const int value = scabenchTestNowhere();
