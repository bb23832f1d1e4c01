#include "approvaldialog.h"
