// The programs a plain CF node loads (plain_nodes.cpp), served by the
// launcher itself as a read-only CF::FileSystem in its own ORB.
//
// A GPP's load copies the file it is named from the CF::FileSystem it is
// handed (exists, list, open, File::sizeOf / read / close) into its own
// cache, and its execute runs that copy by the same absolute name. So the
// launcher hands each plain node this file system, and names each program
// /scabench/bin/PROGRAM (PROGRAM the node's name for it: scabench-host, an
// external's program) in load, execute and unload. What it serves there is
// the file the launcher would run itself: the plan's host_binary, an
// external's exec[0] (found on PATH when it has no "/"). The node is this
// machine (checkOnThisMachine), so the copy runs as the file does.
//
// What each operation answers (as the node's own ProfileFileSystem,
// python/scabench/node/filesystem.py, does):
//   exists, list   names under /scabench/bin (and the folders above);
//                  list's pattern a folder ending in "/" or a path whose last
//                  part may hold wildcards; each entry its name, kind, size,
//                  MODIFIED_TIME, READ_ONLY (true) and EXECUTABLE (the
//                  owner's x bit), the file properties REDHAWK's list gives
//   open           read-only (read_Only false: FileException CF_EROFS); a
//                  File whose read answers every byte asked up to the
//                  file's end (a GPP copies in blocks of its largest GIOP
//                  message and counts what it asked, not what came: a
//                  shorter answer would leave a hole in its copy)
//   query          SIZE (the bytes served), AVAILABLE_SPACE (0)
//   remove, copy, move, create, mkdir, rmdir, File::write
//                  CF_EROFS: nothing is written through it
// A name that is not absolute, or holds ".." or a NUL: InvalidFileName
// (CF_EINVAL); a file not served: FileException CF_ENOENT from open.
#include <fnmatch.h>
#include <sys/stat.h>
#include "launcher/launcher.hpp"

namespace scabench::launch {

namespace {

constexpr const char* SERVED_FOLDER = "/scabench/bin/";
const char* const READ_ONLY =
    "the launcher's file system is read-only: it serves the programs a plain node loads, at /scabench/bin";

void checkName(const std::string& name, bool wildcards) {
  const bool dotdot = ("/" + name + "/").find("/../") != std::string::npos;
  if (name.empty() || name.front() != '/' || dotdot || name.find('\0') != std::string::npos ||
      (!wildcards && name.find_first_of("*?[") != std::string::npos))
    throw CF::InvalidFileName(
        CF::CF_EINVAL, ("'" + name + "': the launcher's file system takes absolute names, without '..'").c_str());
}

CORBA::Any ulonglong(unsigned long long v) {
  CORBA::Any any;
  any <<= CORBA::ULongLong(v);
  return any;
}

CORBA::Any boolean(bool v) {
  CORBA::Any any;
  any <<= CORBA::Any::from_boolean(v);
  return any;
}

class ProgramFile : public virtual POA_CF::File {
 public:
  ProgramFile(std::string name, int fd) : name_(std::move(name)), fd_(fd) {}
  ~ProgramFile() override {
    if (fd_ >= 0) ::close(fd_);
  }

  char* fileName() override { return CORBA::string_dup(name_.c_str()); }

  CORBA::ULong filePointer() override {
    std::lock_guard lock(mutex_);
    return pointer_;
  }

  void read(CF::OctetSequence_out data, CORBA::ULong length) override {
    std::lock_guard lock(mutex_);
    if (fd_ < 0) throw CF::File::IOException(CF::CF_EBADF, (name_ + " is closed").c_str());
    struct stat st {};
    if (::fstat(fd_, &st) != 0) throw CF::File::IOException(CF::CF_EIO, (name_ + ": " + strerror(errno)).c_str());
    const off_t left = std::max<off_t>(0, st.st_size - off_t(pointer_));
    length = CORBA::ULong(std::min<off_t>(length, left));  // what is asked, but not past the end
    CF::OctetSequence_var bytes = new CF::OctetSequence(length);
    bytes->length(length);
    CORBA::ULong got = 0;
    while (got < length) {
      const ssize_t n = ::pread(fd_, bytes->get_buffer() + got, length - got, off_t(pointer_ + got));
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) throw CF::File::IOException(CF::CF_EIO, (name_ + ": " + strerror(errno)).c_str());
      if (n == 0) break;  // shortened meanwhile
      got += CORBA::ULong(n);
    }
    bytes->length(got);
    pointer_ += got;
    data = bytes._retn();
  }

  void write(const CF::OctetSequence&) override { throw CF::File::IOException(CF::CF_EROFS, READ_ONLY); }

  CORBA::ULong sizeOf() override {
    std::lock_guard lock(mutex_);
    struct stat st {};
    if (fd_ < 0 || ::fstat(fd_, &st) != 0) throw CF::FileException(CF::CF_EBADF, (name_ + " is closed").c_str());
    return CORBA::ULong(st.st_size);
  }

  void close() override {
    {
      std::lock_guard lock(mutex_);
      if (fd_ < 0) throw CF::FileException(CF::CF_EBADF, (name_ + " is closed").c_str());
      ::close(fd_);
      fd_ = -1;
    }
    // Its reference answers OBJECT_NOT_EXIST from now on; the servant goes once this call is done.
    PortableServer::POA_var poa = _default_POA();
    PortableServer::ObjectId_var id = poa->servant_to_id(this);
    poa->deactivate_object(id);
  }

  void setFilePointer(CORBA::ULong pointer) override {
    if (pointer > sizeOf()) throw CF::File::InvalidFilePointer();
    std::lock_guard lock(mutex_);
    pointer_ = pointer;
  }

 private:
  std::string name_;
  std::mutex mutex_;
  int fd_;
  CORBA::ULong pointer_ = 0;
};

class ProgramFileSystem : public virtual POA_CF::FileSystem {
 public:
  explicit ProgramFileSystem(std::map<std::string, std::string> files) : files_(std::move(files)) {}

  void remove(const char* name) override { refuse(name); }
  void copy(const char* from, const char* to) override {
    checkName(from, false);
    refuse(to);
  }
  void move(const char* from, const char* to) override {
    checkName(to, false);
    refuse(from);
  }
  CF::File_ptr create(const char* name) override { refuse(name); }
  void mkdir(const char* name) override { refuse(name); }
  void rmdir(const char* name) override { refuse(name); }

  CORBA::Boolean exists(const char* fileName) override {
    const std::string name = fileName;
    checkName(name, false);
    return files_.count(name) > 0 || !children(name).empty();
  }

  CF::FileSystem::FileInformationSequence* list(const char* patternText) override {
    const std::string pattern = patternText;
    checkName(pattern, true);
    std::string folder = pattern, wanted = "*";
    if (pattern.back() != '/') {
      const std::size_t slash = pattern.rfind('/');
      folder = pattern.substr(0, slash + 1);
      wanted = pattern.substr(slash + 1);
    }
    CF::FileSystem::FileInformationSequence_var found = new CF::FileSystem::FileInformationSequence;
    for (const auto& [child, isFolder] : children(folder)) {
      if (::fnmatch(wanted.c_str(), child.c_str(), 0) != 0) continue;
      CF::FileSystem::FileInformationType entry;
      entry.name = child.c_str();
      entry.kind = isFolder ? CF::FileSystem::DIRECTORY : CF::FileSystem::PLAIN;
      entry.size = 0;
      struct stat st {};
      if (!isFolder && ::stat(files_.at(canonicalFolder(folder) + child).c_str(), &st) == 0) entry.size = st.st_size;
      entry.fileProperties.length(3);
      entry.fileProperties[0].id = CF::FileSystem::MODIFIED_TIME_ID;
      entry.fileProperties[0].value = ulonglong((unsigned long long)st.st_mtime);
      entry.fileProperties[1].id = "READ_ONLY";
      entry.fileProperties[1].value = boolean(true);
      entry.fileProperties[2].id = "EXECUTABLE";  // REDHAWK's; a GPP makes its copy executable by it
      entry.fileProperties[2].value = boolean(!isFolder && (st.st_mode & S_IXUSR));
      found->length(found->length() + 1);
      found[found->length() - 1] = entry;
    }
    return found._retn();
  }

  CF::File_ptr open(const char* fileName, CORBA::Boolean readOnly) override {
    const std::string name = fileName;
    checkName(name, false);
    if (!readOnly) refuse(fileName);
    const auto file = files_.find(name);
    if (file == files_.end())
      throw CF::FileException(children(name).empty() ? CF::CF_ENOENT : CF::CF_EISDIR,
                              ("'" + name + "' is no file the launcher serves").c_str());
    const int fd = ::open(file->second.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) throw CF::FileException(CF::CF_EIO, (file->second + ": " + strerror(errno)).c_str());
    auto* opened = new ProgramFile(name, fd);
    PortableServer::POA_var poa = _default_POA();
    PortableServer::ObjectId_var id = poa->activate_object(opened);
    opened->_remove_ref();  // the POA's now: deactivated by close, or with the ORB
    CORBA::Object_var ref = poa->id_to_reference(id);
    return CF::File::_narrow(ref);
  }

  void query(CF::Properties& properties) override {
    unsigned long long size = 0;
    for (const auto& [_, path] : files_) {
      struct stat st {};
      if (::stat(path.c_str(), &st) == 0) size += st.st_size;
    }
    const std::map<std::string, unsigned long long> values = {{CF::FileSystem::SIZE, size},
                                                              {CF::FileSystem::AVAILABLE_SPACE, 0}};
    if (properties.length() == 0) {
      properties.length(CORBA::ULong(values.size()));
      CORBA::ULong i = 0;
      for (const auto& [id, v] : values) properties[i].id = id.c_str(), properties[i++].value = ulonglong(v);
      return;
    }
    CF::Properties unknown;
    for (CORBA::ULong i = 0; i < properties.length(); ++i) {
      const auto v = values.find(properties[i].id.in());
      if (v != values.end()) {
        properties[i].value = ulonglong(v->second);
      } else {
        unknown.length(unknown.length() + 1);
        unknown[unknown.length() - 1] = properties[i];
      }
    }
    if (unknown.length()) throw CF::FileSystem::UnknownFileSystemProperties(unknown);
  }

 private:
  [[noreturn]] static void refuse(const char* name) {
    checkName(name, false);
    throw CF::FileException(CF::CF_EROFS, READ_ONLY);
  }

  static std::string canonicalFolder(std::string folder) {
    if (folder.empty() || folder.back() != '/') folder += '/';
    return folder;
  }

  // What a folder holds, each entry's name and whether it is a folder: the
  // served names below it, one level down.
  std::map<std::string, bool> children(const std::string& name) const {
    const std::string folder = canonicalFolder(name);
    std::map<std::string, bool> out;
    for (const auto& [served, _] : files_) {
      if (served.rfind(folder, 0) != 0) continue;
      const std::string rest = served.substr(folder.size());
      const std::size_t slash = rest.find('/');
      out[rest.substr(0, slash)] = slash != std::string::npos;
    }
    return out;
  }

  const std::map<std::string, std::string> files_;  // served name -> the file of this machine
};

// A program named without "/" is found as exec finds it: on PATH.
std::string onThisMachine(const std::string& program) {
  if (program.find('/') != std::string::npos) return std::filesystem::absolute(program).string();
  const char* path = getenv("PATH");
  std::istringstream folders(path ? path : "");
  for (std::string folder; std::getline(folders, folder, ':');) {
    const std::string candidate = (folder.empty() ? "." : folder) + "/" + program;
    if (::access(candidate.c_str(), X_OK) == 0) return std::filesystem::absolute(candidate).string();
  }
  return program;  // not found: open answers ENOENT, and the node's load says so
}

}  // namespace

std::string Launcher::servedName(const HostProc& h) { return SERVED_FOLDER + h.program; }

CF::FileSystem_ptr Launcher::programFileSystem() {
  if (CORBA::is_nil(programFs_)) {
    std::map<std::string, std::string> files;
    for (const auto& h : hosts_)
      if (!h.node.empty() && nodes_.at(h.node).plainCf)
        files[servedName(h)] = onThisMachine(h.exec ? h.argv.front() : plan_.hostBinary);
    CORBA::Object_var obj = orb_->resolve_initial_references("RootPOA");
    PortableServer::POA_var poa = PortableServer::POA::_narrow(obj);
    PortableServer::POAManager_var manager = poa->the_POAManager();
    manager->activate();  // omniORB serves from its own threads: no orb->run
    auto* fs = new ProgramFileSystem(std::move(files));
    PortableServer::ObjectId_var id = poa->activate_object(fs);
    fs->_remove_ref();
    obj = poa->id_to_reference(id);
    programFs_ = CF::FileSystem::_narrow(obj);
  }
  return programFs_.in();
}

}  // namespace scabench::launch
